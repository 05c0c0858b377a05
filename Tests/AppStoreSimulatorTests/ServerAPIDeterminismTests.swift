import Foundation
import Testing

@testable import AppStoreSimulator

/// The same seed gives the same answers (payloads byte for byte; ECDSA signatures are randomised), another seed
/// other ones.
@Suite struct ServerAPIDeterminismTests {
    /// The payload segments of every JWS in a body, in order.
    static func payloads(_ body: [UInt8]) -> [String] {
        let text = String(decoding: body, as: UTF8.self)
        return text.split(separator: "\"").filter { $0.hasPrefix("eyJ") && $0.split(separator: ".").count == 3 }
            .map { String($0.split(separator: ".")[1]) }
    }

    static func answers(seed: UInt64) async throws -> [[String]] {
        try await withSimulator(seed: seed, subscriptions: 120, configure: { $0.serverAPILimits = .unlimited }) {
            server in
            let client = try await ServerAPIClient.connect(to: server)
            var out: [[String]] = []
            for family in server.population.families.prefix(40) where family.fixedStatus == nil {
                let base = ServerAPIClient.base(sandbox: family.sandbox)
                let id = family.primaryOriginalTransactionId
                let paths = [
                    "/inApps/v1/subscriptions/\(id)", "/inApps/v2/history/\(id)",
                    "/inApps/v1/transactions/\(id)",
                ]
                for path in paths {
                    let r = try await client.get(base + path)
                    out.append([String(r.status)] + Self.payloads(r.body))
                }
            }
            let notes = try await client.connection.send(
                .POST,
                "/inApps/v1/notifications/history",
                body: NotificationHistoryTests.body(
                    start: PopulationTests.now - 30 * SimTime.day,
                    end: PopulationTests.now
                ),
                headers: [client.fresh.authorization]
            )
            // A notification nests signed data (randomised signatures): compare what it says, not its bytes.
            out.append(
                try Self.payloads(notes.body).map { segment in
                    let bytes = try #require(TestJWSVerifier.base64URL(segment[...]))
                    let json = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
                    return [json["notificationType"], json["subtype"], json["notificationUUID"], json["signedDate"]]
                        .map { "\($0 ?? "-")" }.joined(separator: "|")
                }
            )
            await client.close()
            return out
        }
    }

    @Test func sameSeedSameAnswersOtherSeedOthers() async throws {
        let a = try await Self.answers(seed: 31)
        let b = try await Self.answers(seed: 31)
        let c = try await Self.answers(seed: 32)
        #expect(a.count > 20 && a.flatMap { $0 }.count > 60 && (a.last?.count ?? 0) > 5)
        let same = a == b
        let different = a != c
        #expect(same)
        #expect(different)
    }
}
