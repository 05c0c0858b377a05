import AppStoreSignedData
import AppStoreSimulator
import Foundation
import Postgres
import TestSupport
import Testing

/// The simulator's App Store Connect report downloads (docs/simulator.md, "App Store Connect reports") loaded with the
/// real `renewal-reconciler apple-reports import` (docs/apple-reports.md): a Subscriber report and both Financial
/// reports, fetched over loopback with the reconciler's own App Store Connect token, import without error, and the
/// stored sums per currency equal the served files' totals.
@Suite struct SimulatorReportsImportTests {
    /// Per currency: money (milliunits) and units of one report kind.
    typealias Totals = [String: (amount: Int64, units: Int64)]

    @Test func downloadedReportsImportAndTheStoredSumsEqualTheServedTotals() async throws {
        let world = try await EndToEndFixture(subscriptions: 0)
        let server = try ReportSimulator.start(seed: 42, subscriptions: 1500, in: world.directory).server
        defer { try? server.shutdown() }
        let identity = server.serverAPI.identity
        let signer = try APITokenSigner(
            key: try APIPrivateKey(pem: identity.teamKey.pemRepresentation),
            keyId: identity.teamKeyId,
            issuerId: identity.issuerId,
            scope: .appStoreConnect
        )
        let vendor = identity.vendorNumber
        let base = server.baseURL
        let downloads = [
            (
                "subscriber.txt.gz",
                "\(base)/v1/salesReports?filter[vendorNumber]=\(vendor)&filter[reportType]=SUBSCRIBER&filter[reportSubType]=DETAILED&filter[frequency]=DAILY&filter[reportDate]=2026-11-20&filter[version]=1_3"
            ),
            (
                "financial.txt.gz",
                "\(base)/v1/financeReports?filter[vendorNumber]=\(vendor)&filter[reportType]=FINANCIAL&filter[regionCode]=ZZ&filter[reportDate]=2027-01"
            ),
            (
                "finance_detail.txt.gz",
                "\(base)/v1/financeReports?filter[vendorNumber]=\(vendor)&filter[reportType]=FINANCE_DETAIL&filter[regionCode]=Z1&filter[reportDate]=2027-01"
            ),
        ]
        var files: [String] = []
        var served: [Totals] = []
        for (name, url) in downloads {
            let path = world.directory.appendingPathComponent(name).path
            try await download(url, to: path, token: signer.token().value)
            files.append(path)
            served.append(try await totals(ofGzip: path, subscriber: name.hasPrefix("subscriber")))
        }
        let outcome = await world.runReconciler(["apple-reports", "import", "--vendor-number", vendor] + files)
        #expect(outcome.status == 0, "\(outcome)")
        let conn = try world.connect()
        defer { conn.close() }
        let kinds = try conn.query("SELECT kind FROM apple_report_files ORDER BY id").map {
            try $0.decode("kind", as: String.self)
        }
        #expect(kinds == ["subscriber", "financial", "finance_detail"])
        let stored = [
            try sums(conn, "apple_subscriber_events", "customer_currency", "customer_price_milliunits", "units"),
            try sums(
                conn,
                "apple_financial_rows",
                "partner_share_currency",
                "extended_partner_share_milliunits",
                "quantity"
            ),
            try sums(
                conn,
                "apple_finance_detail_rows",
                "partner_share_currency",
                "extended_partner_share_milliunits",
                "quantity"
            ),
        ]
        for (index, name) in ["subscriber", "financial", "finance_detail"].enumerated() {
            #expect(!served[index].isEmpty, "\(name): nothing served")
            #expect(describe(stored[index]) == describe(served[index]), "\(name)")
        }
    }

    /// GETs `url` with the token and `Accept: application/a-gzip` into `path` with curl; a 200 is required.
    func download(_ url: String, to path: String, token: String) async throws {
        let outcome = try await ChildProcess.run(
            "/usr/bin/env",
            [
                "curl", "-sS", "-g", "-o", path, "-w", "%{http_code}", "-H", "Authorization: Bearer \(token)", "-H",
                "Accept: application/a-gzip", url,
            ]
        )
        guard outcome.status == 0, outcome.stdout == "200" else {
            throw FixtureError("download \(url): \(outcome.stdout) \(outcome.stderr)")
        }
    }

    /// The served file's totals per currency, read from its text (gunzipped by the system's gzip): the Subscriber
    /// report's customer price and units, a Financial report's extended partner share and quantity.
    func totals(ofGzip path: String, subscriber: Bool) async throws -> Totals {
        let text = try await ChildProcess.run("/usr/bin/env", ["gzip", "-dc", path]).stdout
        let lines = text.split(separator: "\n").map { $0.components(separatedBy: "\t") }
        guard let header = lines.first(where: { $0.count > 2 }) else { return [:] }
        let (currency, amount, units) =
            subscriber
            ? ("Customer Currency", "Customer Price", "Units")
            : ("Partner Share Currency", "Extended Partner Share", "Quantity")
        guard let c = header.firstIndex(of: currency), let a = header.firstIndex(of: amount),
            let u = header.firstIndex(of: units)
        else { return [:] }
        var totals: Totals = [:]
        for fields in lines where fields.count == header.count && fields != header {
            totals[fields[c], default: (0, 0)].amount += AppleReportFixtures.milliunits(fields[a])
            totals[fields[c], default: (0, 0)].units += Int64(fields[u]) ?? 0
        }
        return totals
    }

    func sums(
        _ conn: PostgresConnection,
        _ table: String,
        _ currency: String,
        _ amount: String,
        _ units: String
    )
        throws -> Totals
    {
        let rows = try conn.query(
            "SELECT \(currency) AS c, sum(\(amount))::bigint AS a, sum(\(units))::bigint AS u FROM \(table) GROUP BY 1"
        )
        var totals: Totals = [:]
        for row in rows {
            totals[try row.decode("c", as: String.self)] = (
                try row.decode("a", as: Int64.self), try row.decode("u", as: Int64.self)
            )
        }
        return totals
    }

    func describe(_ totals: Totals) -> [String] {
        totals.keys.sorted().map { "\($0) \(totals[$0]!.amount) \(totals[$0]!.units)" }
    }
}
