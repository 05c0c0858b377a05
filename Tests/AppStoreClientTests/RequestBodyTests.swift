import AppStoreClient
import AppStoreSimulator
import Foundation
import ReceiptDomain
import TestSupport
import Testing

/// What the client puts on the wire: `receipt-data`, `password`, `exclude-old-transactions`, as valid JSON
/// whatever the stored receipt holds.
@Suite struct RequestBodyTests {
    private func object(_ data: Data) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test func bodyHasTheThreeFields() throws {
        let json = try object(
            VerifyReceiptRequestBody.encode(
                receipt: "MIIT+abc/def==",
                password: "0123abcd",
                excludeOldTransactions: true
            )
        )
        #expect(Set(json.keys) == ["receipt-data", "password", "exclude-old-transactions"])
        #expect(json["receipt-data"] as? String == "MIIT+abc/def==")
        #expect(json["password"] as? String == "0123abcd")
        #expect(json["exclude-old-transactions"] as? Bool == true)

        let noSecret = try object(
            VerifyReceiptRequestBody.encode(receipt: "abc", password: nil, excludeOldTransactions: false)
        )
        #expect(Set(noSecret.keys) == ["receipt-data", "exclude-old-transactions"])
        #expect(noSecret["exclude-old-transactions"] as? Bool == false)
    }

    @Test(arguments: [
        #"quote " inside"#,
        #"back\slash and \" both"#,
        "new\nline\r\ttab",
        "nul \u{0} bell \u{7} esc \u{1B} unit \u{1F} del \u{7F}",
        "unicode é ✓ 😀 and U+2028 \u{2028}",
        "",
        String(repeating: "A/+=", count: 10_000),
    ])
    func awkwardReceiptsStillProduceValidJSON(receipt: String) throws {
        let data = VerifyReceiptRequestBody.encode(receipt: receipt, password: "p\"w\\d", excludeOldTransactions: false)
        let json = try object(data)
        #expect(json["receipt-data"] as? String == receipt)
        #expect(json["password"] as? String == "p\"w\\d")
        // No raw control character survives (JSON forbids them inside strings).
        #expect(data.allSatisfy { $0 >= 0x20 })
        // The simulator's own request scanner reads the same values.
        let parsed = try #require(VerifyRequest.parse(Array(data)))
        #expect(parsed.receiptData == Array(receipt.utf8))
        #expect(parsed.password == Array("p\"w\\d".utf8))
    }

    @Test func theWireCarriesTheFieldsAndJSONHeaders() async throws {
        let server = try LoopbackHTTPServer { _ in .json(#"{"status":21003}"#) }
        defer { server.stop() }
        for excludeOld in [true, false] {
            let (client, http) = SimulatorHarness.makeClient(
                production: server.baseURL + "/verifyReceipt",
                sandbox: server.baseURL + "/sandbox/verifyReceipt",
                password: "the-secret",
                excludeOld: excludeOld
            )
            let result = await SimulatorHarness.send(client, "rec\"eipt\n", to: .production)
            http.shutdown()
            #expect(result.verdict == .reject(VerdictReason(.receiptNotAuthenticated, appleStatus: 21003)))
            let request = try #require(server.requests.last)
            #expect(request.method == "POST")
            #expect(request.path == "/verifyReceipt")
            #expect(request.headers["content-type"] == "application/json")
            let parsed = try #require(VerifyRequest.parse(request.body))
            #expect(parsed.receiptData == Array("rec\"eipt\n".utf8))
            #expect(parsed.password == Array("the-secret".utf8))
            #expect(parsed.excludeOldTransactions == excludeOld)
            let json = try object(Data(request.body))
            #expect(Set(json.keys) == ["receipt-data", "password", "exclude-old-transactions"])
        }
        #expect(server.requests.count == 2)
    }

    /// Against the simulator: status 0 proves `receipt-data` and `password` arrived (no password is
    /// 21004); `exclude-old-transactions` arrived when the answer holds only the latest renewal.
    @Test func theSimulatorHonoursEveryField() async throws {
        var counts: [Bool: Int] = [:]
        for excludeOld in [false, true] {
            counts[excludeOld] = try await withHarness(excludeOld: excludeOld) { h -> Int? in
                let result = await h.send(try h.receipt(.silentRenewal), to: .production)
                guard case .ok(let response) = result.verdict else {
                    Issue.record("expected ok, got \(result.verdict)")
                    return nil
                }
                return response.latestReceiptInfo?.count ?? 0
            }
        }
        let all = try #require(counts[false])
        let latestOnly = try #require(counts[true])
        #expect(latestOnly == 1)
        #expect(all > latestOnly, "a silent renewal has several periods")
    }
}
