import AppStoreClient
import AppleReports
import ArgumentParser
import CurlHTTP
import Foundation
import Reconciler

/// `apple-reports download`: Apple's reports fetched from the App Store Connect API and stored as `import` stores
/// them, skipping what is stored already.
struct AppleReportsDownloadCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "download",
        abstract: "Download App Store Connect reports (Subscriber, Subscription, Financial) into the database.",
        discussion: """
            Asks the App Store Connect API for the Subscriber, Subscription Event and Subscription reports of \
            every Pacific day from --from through --to and for the consolidated and detailed Financial reports of every Apple fiscal month holding one \
            of those days, and stores each file as `apple-reports import` does. A report already stored (downloaded \
            before, or imported by hand) is not asked for again, so running the command every morning over the \
            last weeks fetches only what is new, and a download stopped anywhere resumes where it left off.

            It needs a team API key from App Store Connect (Users and Access, Integrations, Team Keys) with a role \
            that may read sales and finance reports: the .p8 file (--key-file, APP_STORE_CONNECT_KEY_FILE or the \
            systemd credential app-store-connect-key), its key id (--key-id, APP_STORE_CONNECT_KEY_ID), the issuer \
            id (--issuer-id, APP_STORE_CONNECT_ISSUER_ID) and your vendor number (--vendor-number, \
            APP_STORE_CONNECT_VENDOR_NUMBER). The key is read from its file, never shown.

            A day with no sales and a report Apple has not published yet (daily reports come by 8 a.m. Pacific the \
            next day, Financial reports by the end of the following fiscal month) are normal: they are listed and \
            asked for again next time. Busy answers (429, 5xx) are retried with backoff, never sooner than Apple asks.

            Exit status: 0 every report stored, already stored, empty or not out yet; 1 a report failed (the others \
            were stored); 78 the key or settings were refused; 69 Apple's hourly request budget ran out (run again \
            later); 64 bad arguments.
            """
    )

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var logging: LoggingOptions

    @Option(help: ArgumentHelp("First Pacific day (YYYY-MM-DD); default: 34 days before --to.", valueName: "day"))
    var from: String?

    @Option(help: ArgumentHelp("Last Pacific day (YYYY-MM-DD); default: yesterday, Pacific time.", valueName: "day"))
    var to: String?

    @Option(
        parsing: .upToNextOption,
        help: ArgumentHelp(
            "Which reports: subscriber, subscription_event, subscription, financial, finance_detail (default: all).",
            valueName: "report"
        )
    )
    var reports: [String] = []

    @Option(help: ArgumentHelp("The team key's .p8 file (else APP_STORE_CONNECT_KEY_FILE).", valueName: "file"))
    var keyFile: String?

    @Option(help: ArgumentHelp("The key's id (else APP_STORE_CONNECT_KEY_ID).", valueName: "id"))
    var keyId: String?

    @Option(help: ArgumentHelp("The issuer id (else APP_STORE_CONNECT_ISSUER_ID).", valueName: "id"))
    var issuerId: String?

    @Option(help: ArgumentHelp("Your vendor number (else APP_STORE_CONNECT_VENDOR_NUMBER).", valueName: "number"))
    var vendorNumber: String?

    @Option(
        name: .customLong("api-url"),
        help: ArgumentHelp(
            "The App Store Connect API's base URL (http:// only to loopback, e.g. the simulator).",
            valueName: "url"
        )
    )
    var apiURL = "https://api.appstoreconnect.apple.com"

    @Option(
        name: .customLong("ca-file"),
        help: ArgumentHelp(
            "PEM file of the CA certificates the API's HTTPS must chain to (overrides APPLE_CA_FILE).",
            valueName: "file"
        )
    )
    var caFile: String?

    func validate() throws {
        for day in [from, to].compactMap({ $0 }) where PacificDay(day) == nil {
            throw ValidationError("not a day: \(day.prefix(40)) (expected YYYY-MM-DD)")
        }
        for report in reports where AppStoreConnectReportRequest.Report(rawValue: report) == nil {
            throw ValidationError(
                "--reports: unknown report \(report.prefix(40)) (subscriber, subscription_event, subscription, "
                    + "financial, finance_detail)"
            )
        }
    }

    func run() throws {
        logging.bootstrap()
        try runReportingErrors {
            let last = to.flatMap(PacificDay.init) ?? PacificDay(days: PacificDay(of: Date()).days - 1)
            let first = from.flatMap(PacificDay.init) ?? PacificDay(days: last.days - 34)
            guard first <= last else { throw UsageError("--from \(first) is after --to \(last)") }
            try AppleConfiguration.validateEndpoint(apiURL, setting: "--api-url")
            let settings = try AppStoreConnectConfiguration.load(
                keyFile: keyFile,
                keyId: keyId,
                issuerId: issuerId,
                vendorNumber: vendorNumber
            )
            let http = CurlHTTPClient(
                configuration: CurlHTTPClient.Configuration(caFile: try HTTPSCAFileConfiguration.load(flag: caFile))
            )
            defer { http.shutdown() }
            let client = AppStoreConnectClient(
                http: http,
                endpoint: AppStoreConnectClient.Endpoint(baseURL: apiURL),
                signer: try settings.signer()
            )
            let conn = try database.migratedConnection()
            defer { conn.close() }
            let wanted =
                reports.isEmpty
                ? Set(AppStoreConnectReportRequest.Report.allCases)
                : Set(reports.compactMap(AppStoreConnectReportRequest.Report.init))
            let requests = AppleReportRequests.covering(
                from: first,
                through: last,
                reports: wanted,
                vendorNumber: settings.vendorNumber
            )
            try Self.download(
                requests,
                AppleReportDownloader(connection: conn, send: AppleReportDownloader.blocking(client))
            )
        }
    }

    /// Downloads `requests`, printing a line for each and a total; the exit status as the discussion says.
    static func download(_ requests: [AppStoreConnectReportRequest], _ downloader: AppleReportDownloader) throws {
        let outcomes: [AppleReportDownloadOutcome]
        do {
            outcomes = try downloader.download(requests) {
                print(line($0))
                CrashPoints.reach("report-downloaded")
            }
        } catch let stopped as AppleReportDownloader.Stopped {
            FileHandle.standardError.write(Data("error: \(Redactor.shared.redact(stopped.description))\n".utf8))
            throw ExitCode(
                stopped.budgetSpent
                    ? ReconcilerExitCode.appleUnavailable.rawValue : ReconcilerExitCode.configuration.rawValue
            )
        }
        print(summary(outcomes))
        if outcomes.contains(where: \.isFailure) { throw ExitCode(ReconcilerExitCode.failure.rawValue) }
    }

    /// `39 reports: 35 stored, 2 already stored, 2 not available yet`: each kind of ending that occurred.
    static func summary(_ outcomes: [AppleReportDownloadOutcome]) -> String {
        var counts: [(String, Int)] = []
        func add(_ name: String, _ matches: (AppleReportDownloadOutcome.Result) -> Bool) {
            let n = outcomes.filter { matches($0.result) }.count
            if n > 0 { counts.append((name, n)) }
        }
        add("stored") { if case .stored = $0 { true } else { false } }
        add("already stored") {
            switch $0 {
            case .alreadyStored, .sameFileStoredBefore: true
            default: false
            }
        }
        add("without sales") { $0 == .noSales }
        add("not available yet") { if case .notYetAvailable = $0 { true } else { false } }
        add("gone") { if case .gone = $0 { true } else { false } }
        add("FAILED") { if case .failed = $0 { true } else { false } }
        let parts = counts.map { "\($0.1) \($0.0)" }
        return "\(outcomes.count) reports" + (parts.isEmpty ? "" : ": " + parts.joined(separator: ", "))
    }

    static func line(_ outcome: AppleReportDownloadOutcome) -> String {
        let text: String
        switch outcome.result {
        case .stored(let fileId, let rows): text = "stored as file \(fileId), \(rows) rows"
        case .alreadyStored: text = "already stored"
        case .sameFileStoredBefore(let fileId): text = "the same file is stored already (file \(fileId))"
        case .noSales: text = "no sales that day"
        case .notYetAvailable(let detail): text = "not available yet (\(detail))"
        case .gone(let detail): text = "no longer available at Apple (\(detail))"
        case .failed(let reason): text = "FAILED: \(Redactor.shared.redact(reason))"
        }
        return "\(outcome.label): \(text)"
    }
}
