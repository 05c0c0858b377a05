import Foundation
import TestSupport

@testable import AppStoreSimulator

/// Downloads App Store Connect reports from a started simulator over loopback HTTP, as a client would: the team key's
/// token, `Accept: application/a-gzip`, percent-encoded filters; gunzips with the system's gzip (not the simulator's).
struct ReportClient: Sendable {
    let server: SimulatorServer
    var token: TestAPIToken

    init(_ server: SimulatorServer) {
        self.server = server
        token = TestAPIToken(connect: server.serverAPI.identity)
    }

    var vendorNumber: String { server.serverAPI.identity.vendorNumber }

    /// `/v1/salesReports` with the Subscriber report's filters for `date`; `overrides` replaces or (with nil) drops
    /// filters by name (`reportType`).
    func subscriberPath(_ date: String, _ overrides: [String: String?] = [:]) -> String {
        let filters: [String: String?] = [
            "vendorNumber": vendorNumber, "reportType": "SUBSCRIBER", "reportSubType": "DETAILED",
            "frequency": "DAILY", "reportDate": date, "version": "1_3",
        ]
        return "/v1/salesReports?" + Self.query(filters.merging(overrides) { $1 })
    }

    /// `/v1/financeReports` for the fiscal `reportDate`, consolidated (ZZ) or detailed (Z1).
    func financePath(_ reportDate: String, detailed: Bool, _ overrides: [String: String?] = [:]) -> String {
        let filters: [String: String?] = [
            "vendorNumber": vendorNumber, "reportType": detailed ? "FINANCE_DETAIL" : "FINANCIAL",
            "regionCode": detailed ? "Z1" : "ZZ", "reportDate": reportDate,
        ]
        return "/v1/financeReports?" + Self.query(filters.merging(overrides) { $1 })
    }

    static func query(_ filters: [String: String?]) -> String {
        filters.keys.sorted().compactMap { name in
            filters[name].flatMap { $0 }.map { "filter%5B\(name)%5D=\($0)" }
        }.joined(separator: "&")
    }

    /// Without `token`, signs with `fresh`.
    func get(
        _ path: String,
        accept: String = "application/a-gzip",
        token: TestAPIToken? = nil
    ) async throws
        -> TestResponse
    {
        let c = try await TestConnection.connect(port: server.port)
        defer { Task { await c.close() } }
        return try await c.send(.GET, path, headers: [(token ?? fresh).authorization, ("Accept", accept)])
    }

    /// The client's own token issued now, as a client re-mints its token before it expires: a month of daily reports
    /// on a loaded machine outlives one token's 5 minutes.
    var fresh: TestAPIToken {
        var current = token
        current.issuedAt = Int64(Date().timeIntervalSince1970)
        return current
    }

    /// The report's text: a 200 whose body is gzip.
    func text(_ path: String) async throws -> String {
        let response = try await get(path)
        guard response.status == 200, response.header("Content-Type") == "application/a-gzip" else {
            throw TestClientError(
                description: "\(path): \(response.status) \(String(decoding: response.body, as: UTF8.self))"
            )
        }
        let outcome = try await ChildProcess.run("/usr/bin/env", ["gzip", "-dc"], input: Data(response.body))
        guard outcome.status == 0 else { throw TestClientError(description: "gzip -dc: \(outcome)") }
        return outcome.stdout
    }

    /// The data rows of a report's text as dictionaries by column, from the first header line on; blank lines,
    /// `Total_` lines and the detailed report's per-country summary left out.
    static func rows(_ text: String) -> [[String: String]] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let headerIndex = lines.firstIndex(where: { $0.split(separator: "\t").count > 2 }) else { return [] }
        let header = lines[headerIndex].components(separatedBy: "\t")
        var rows: [[String: String]] = []
        for line in lines[(headerIndex + 1)...] where !line.isEmpty && line != lines[headerIndex] {
            let fields = line.components(separatedBy: "\t")
            if fields[0].hasPrefix("Total_") { continue }
            if fields.count != header.count { break }
            rows.append(Dictionary(uniqueKeysWithValues: zip(header, fields)))
        }
        return rows
    }

    /// The Apple error of a JSON error body: (status, code, detail, source parameter).
    static func error(_ response: TestResponse) -> (status: String, code: String, detail: String, parameter: String?)? {
        guard let errors = response.json?["errors"] as? [[String: Any]], let first = errors.first else { return nil }
        return (
            first["status"] as? String ?? "", first["code"] as? String ?? "", first["detail"] as? String ?? "",
            (first["source"] as? [String: Any])?["parameter"] as? String
        )
    }
}
