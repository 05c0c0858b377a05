import AppStoreClient
import AppleReports
import CivilTime
import CurlHTTP
import Foundation
import Postgres
import Reconciler

/// `demo --tie-out` (docs/tie-out.md, "The demo"): a fiscal month of nights against the simulator's `retail` world
/// with lost orders, then Apple's reports of the month downloaded from the simulator through the App Store Connect
/// API, the tie-out written into the report directory, and compared with what the simulator knows it put there
/// (`TieOutTruthComparison`).
public struct DemoTieOut {
    /// The fiscal month tied out.
    public let month: AppleFiscalMonth
    /// The nights' world: its `arguments(night:)` are the simulator's, its start the first night and the anchor.
    public let nights: DemoNights
    /// The export of the first night (`server-api/api.json`, `team-key.p8`: the team's App Store Connect key).
    public let exportDirectory: URL
    public let reportDirectory: String
    public let seed: UInt64
    public let subscriptions: Int
    /// The world's own arguments for `export` (`--mix retail`, `--lost-orders N`).
    public let worldArguments: [String]

    public init(
        month: AppleFiscalMonth,
        nights: DemoNights,
        exportDirectory: URL,
        reportDirectory: String,
        seed: UInt64,
        subscriptions: Int,
        worldArguments: [String]
    ) {
        self.month = month
        self.nights = nights
        self.exportDirectory = exportDirectory
        self.reportDirectory = reportDirectory
        self.seed = seed
        self.subscriptions = subscriptions
        self.worldArguments = worldArguments
    }

    /// What the tie-out found and how it compares with the truth.
    public struct Outcome: Sendable {
        public var result: TieOutResult
        public var directory: String
        public var truth: TieOutTruthComparison.Report
        public var downloads: [AppleReportDownloadOutcome]
    }

    /// The month a demo as of `asOf` ties out: the latest fiscal month that ended at least `settlementDays` before
    /// the as-of's Pacific day.
    public static func month(before asOf: Date) -> AppleFiscalMonth {
        let last = PacificDay(days: PacificDay(of: asOf).days - settlementDays)
        let containing = AppleFiscalMonth(containing: last)
        return containing.end <= last
            ? containing : AppleFiscalMonth(containing: PacificDay(days: containing.start.days - 1))
    }

    /// The days after a month's end that Apple may still settle its sales on (the simulator: up to 3) and that the
    /// nights run on, so the ledger holds every sale of the month and its neighbours.
    public static let settlementDays: Int64 = 4

    /// The first night: 23:00 UTC of the day before the month begins (the anchor of the world).
    public static func firstNight(of month: AppleFiscalMonth) -> Date {
        Date(timeIntervalSince1970: TimeInterval((month.start.days - 1) * 86_400 + 23 * 3_600))
    }

    /// Nights from the first through `settlementDays` after the month's last day.
    public static func nightCount(of month: AppleFiscalMonth) -> Int {
        Int(month.end.days - month.start.days + 2 + settlementDays)
    }

    /// The night index whose clock serves the Financial reports the month's tie-out needs: its own, and the next
    /// month's detailed report (its sales settled after the month's end), out once the month after that has ended
    /// (docs/simulator.md, "When").
    func reportsNight() -> Int {
        let available = month.next.next.end.days + 2
        return Int(available - (month.start.days - 1))
    }

    /// Downloads, ties out and compares, with the simulator serving at the reports' night.
    public func run(
        connectionString: String,
        sharedSecret: String,
        simulatorBinary: String
    ) throws
        -> Outcome
    {
        let night = reportsNight()
        let simulator = try SimulatorProcess(
            binary: simulatorBinary,
            arguments: nights.arguments(night: night),
            sharedSecret: sharedSecret
        )
        defer { simulator.stop() }
        let connection = try PostgresConnection(connectionString)
        defer { connection.close() }
        let downloads = try download(connection, baseURL: simulator.baseURL)
        let loader = TieOutLoader(connection: connection, commission: .standard, bundleId: nil)
        let (input, notes) = try loader.load(from: month.start, to: month.end)
        let result = TieOutComparison.compare(input, fiscalMonth: month, notes: notes)
        let directory = (reportDirectory as NSString).appendingPathComponent("tieout_\(result.periodLabel)")
        try TieOutReport.write(result, directory: directory)
        let truth = try salesTruth(asOf: nights.asOf(night: night), simulatorBinary: simulatorBinary)
        return Outcome(
            result: result,
            directory: directory,
            truth: try TieOutTruthComparison(result: result, truthFile: truth).compare(),
            downloads: downloads
        )
    }

    /// The month's Subscriber reports (and a few days each side) and the Financial reports of the fiscal months
    /// holding them, with the team key the simulator exported; a report that fails stops the demo.
    func download(_ connection: PostgresConnection, baseURL: String) throws -> [AppleReportDownloadOutcome] {
        let api = try JSONSerialization.jsonObject(
            with: Data(contentsOf: exportDirectory.appendingPathComponent("server-api/api.json"))
        )
        guard let api = api as? [String: Any], let keyId = api["team_key_id"] as? String,
            let issuerId = api["issuer_id"] as? String, let vendorNumber = api["vendor_number"] as? String
        else { throw DemoTieOutError("the simulator's server-api/api.json lacks the team key's ids") }
        let settings = try AppStoreConnectConfiguration.load(
            environment: [:],
            keyFile: exportDirectory.appendingPathComponent("server-api/team-key.p8").path,
            keyId: keyId,
            issuerId: issuerId,
            vendorNumber: vendorNumber
        )
        let http = CurlHTTPClient(configuration: CurlHTTPClient.Configuration())
        defer { http.shutdown() }
        let client = AppStoreConnectClient(
            http: http,
            endpoint: AppStoreConnectClient.Endpoint(baseURL: baseURL),
            signer: try settings.signer()
        )
        let requests = AppleReportRequests.covering(
            from: PacificDay(days: month.start.days - 2),
            through: PacificDay(days: month.end.days + Self.settlementDays),
            reports: Set(AppStoreConnectReportRequest.Report.allCases),
            vendorNumber: settings.vendorNumber
        )
        let outcomes = try AppleReportDownloader(connection: connection, send: AppleReportDownloader.blocking(client))
            .download(requests) { _ in }
        if let failed = outcomes.first(where: \.isFailure) {
            throw DemoTieOutError("downloading \(failed.label) from the simulator failed: \(failed.result)")
        }
        return outcomes
    }

    /// Exports the world as it stands at `asOf` with its sales truth from ten days before the month to then; returns
    /// the truth file's path.
    func salesTruth(asOf: Date, simulatorBinary: String) throws -> String {
        let directory = exportDirectory.appendingPathComponent("tie-out-truth")
        let from = month.start.days - 10
        let days = Int64((asOf.timeIntervalSince1970 / 86_400).rounded(.up)) - from + 1
        try SimulatorProcess.export(
            binary: simulatorBinary,
            seed: seed,
            subscriptions: subscriptions,
            now: asOf,
            into: directory.path,
            extra: worldArguments + [
                "--anchor", RFC3339.string(nights.start), "--sales-truth-days", String(days),
            ]
        )
        return directory.appendingPathComponent("server-api/sales-truth.jsonl").path
    }
}

/// Why `demo --tie-out` could not finish.
public struct DemoTieOutError: Error, CustomStringConvertible {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}
