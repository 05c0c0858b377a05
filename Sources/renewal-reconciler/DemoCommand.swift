import AppleReports
import ArgumentParser
import CivilTime
import Foundation
import Logging
import Postgres
import Reconciler
import ReconcilerDemo

struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "See the whole product work in one command, against the App Store simulator.",
        discussion: """
            Starts a throwaway PostgreSQL (unless DATABASE_URL is set; then it uses that database), applies the \
            schema, has the simulator export --subscriptions synthetic subscriptions as an app would have stored \
            them, imports them, puts into a few rows what a previous night's run left (a row revoked before the \
            customer bought again), starts the simulator on loopback, runs the nightly reconciliation, writes the \
            reports, and compares every row with the simulator's truth file. Exits 0 only on a 100% match.
            """
    )

    @Option(help: "Synthetic subscriptions to create.")
    var subscriptions: Int = 10_000

    @Option(help: "Seed of the simulator's population.")
    var seed: UInt64 = 2026

    @Option(help: "Requests per second to the simulator.")
    var rate: Double = 1000

    @Option(help: "Requests in flight.")
    var concurrency: Int = 64

    @Option(help: "Per-request total timeout in seconds.")
    var requestTimeout: Double = 10

    @Option(
        help: ArgumentHelp(
            "As-of time (RFC 3339); default: the latest 23:00 UTC, so the first night's period (its calendar day) "
                + "holds most of a day of purchases and refunds to show as money.",
            valueName: "rfc3339"
        )
    )
    var now: String?

    @Option(help: ArgumentHelp("The appstore-simulator binary (default: next to this one).", valueName: "path"))
    var simulator: String?

    @Option(
        help: ArgumentHelp(
            "Fault rate for every fault kind of the simulator (e.g. 0.02); default none.",
            valueName: "rate"
        )
    )
    var simulatorFaults: Double?

    @Option(
        help: ArgumentHelp(
            "With --source server-api: share (0..1) of subscriptions whose every answer the simulator signs with "
                + "a fault; each must be refused and its row left untouched. Default none.",
            valueName: "share"
        )
    )
    var forgedSubscriptions: Double?

    @Option(help: ArgumentHelp("Write the run's reports under this directory.", valueName: "dir"))
    var reportDir: String = "./reports"

    @Option(
        help: ArgumentHelp(
            "How to ask the simulator: verify-receipt (the default) or server-api (the App Store Server API, "
                + "with the key, ids and root the simulator exports).",
            valueName: "source"
        )
    )
    var source: String = AppleSourceKind.verifyReceipt.rawValue

    @Option(
        name: .customLong("nights"),
        help: ArgumentHelp(
            "Run this many nights, one day apart, against the simulator's moving clock (a report folder per night, "
                + "trends.html and trends.csv in --report-dir, compared with the simulator's truth).",
            valueName: "n"
        )
    )
    var nightCount: Int = 1

    @Flag(
        name: .customLong("tie-out"),
        help: """
            Tie out a fiscal month with Apple's reports: a month of nights through the App Store Server API against \
            the simulator's retail world with lost orders, its reports downloaded through the App Store Connect \
            API, tieout.html/csv/json written, and every difference checked against the cause the simulator put \
            there (docs/tie-out.md, "The demo"). Implies --source server-api and sets --now and --nights.
            """
    )
    var tieOut = false

    @OptionGroup var logging: LoggingOptions
    @OptionGroup var money: MoneyReportOptions

    func validate() throws {
        try SettingBounds.demoSubscriptions.validate(subscriptions, flag: "--subscriptions")
        try SettingBounds.demoNights.validate(nightCount, flag: "--nights")
        try SettingBounds.rate.validate(rate, flag: "--rate")
        try SettingBounds.concurrency.validate(concurrency, flag: "--concurrency")
        try SettingBounds.timeout.validate(requestTimeout, flag: "--request-timeout")
        guard let kind = AppleSourceKind(rawValue: source), kind != .auto else {
            throw ValidationError("--source must be verify-receipt or server-api, not \(source)")
        }
        if let now, RFC3339.parse(now) == nil { throw ValidationError("--now: \(now) is not an RFC 3339 timestamp") }
        if let forgedSubscriptions {
            guard kind == .serverAPI else { throw ValidationError("--forged-subscriptions needs --source server-api") }
            try SettingBounds.share.validate(forgedSubscriptions, flag: "--forged-subscriptions")
        }
        if let simulatorFaults { try SettingBounds.share.validate(simulatorFaults, flag: "--simulator-faults") }
    }

    func run() throws {
        logging.bootstrap()
        try runReportingErrors { try demo() }
    }

    /// The fiscal month `--tie-out` ties out: the latest one ended before the demo's as-of.
    private var tieOutMonth: AppleFiscalMonth? {
        tieOut ? DemoTieOut.month(before: now.flatMap(RFC3339.parse) ?? Self.defaultAsOf(wallClock: Date())) : nil
    }

    /// The nights run: `--nights`, or the tie-out month's.
    private var effectiveNights: Int { tieOutMonth.map(DemoTieOut.nightCount) ?? nightCount }

    /// The simulator's world: `--tie-out` asks for a month like a real app's, with customers the app never stored.
    private var worldArguments: [String] {
        tieOut ? ["--mix", "retail", "--lost-orders", String(max(3, subscriptions / 400))] : []
    }

    private func step(_ text: String) {
        FileHandle.standardError.write(Data("==> \(text)\n".utf8))
    }

    /// What every step of one demo shares: the database, the work directory, the as-of, the app and its secret.
    private struct Setting {
        var url: String
        var work: URL
        var asOf: Date
        var simulatorBinary: String
        var bundleId = "com.example.renewals"
        var secret: String
        var sourceKind: AppleSourceKind
        var serverAPIExport: String { work.appendingPathComponent("server-api").path }
        var truthFile: String { work.appendingPathComponent("truth.jsonl").path }
    }

    private func demo() throws {
        let logger = Logger(label: "renewal-reconciler")
        let secret = "demo-\(UUID().uuidString.prefix(8))-shared-secret"
        Redactor.shared.register(secret)
        // 1. Database.
        var throwaway: ThrowawayPostgres?
        defer { throwaway?.stop() }
        let url = try openDatabase { throwaway = $0 }
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("renewal-demo-\(getpid())")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let setting = Setting(
            url: url,
            work: work,
            asOf: tieOutMonth.map(DemoTieOut.firstNight) ?? now.flatMap(RFC3339.parse)
                ?? Self.defaultAsOf(wallClock: Date()),
            simulatorBinary: simulator ?? Self.siblingBinary("appstore-simulator"),
            secret: secret,
            sourceKind: tieOut ? .serverAPI : AppleSourceKind(rawValue: source) ?? .verifyReceipt
        )
        // 2. What the app stored, and what Apple knows.
        try stageApp(setting)
        // 3. Apple, on loopback.
        let simArguments = simulatorArguments(setting)
        let sim = try SimulatorProcess(
            binary: setting.simulatorBinary,
            arguments: simArguments,
            sharedSecret: secret
        )
        defer { sim.stop() }
        step("simulator listening on 127.0.0.1:\(sim.port)")
        // 4. The nightly run (with faults, as many nights at the same instant as it takes).
        let request = try firstRequest(setting, simulator: sim)
        let summary = try ReconciliationRunner(connectionString: url, logger: logger).run(request)
        let conn = try PostgresConnection(url)
        defer { conn.close() }
        let nights = try repeatUnresolved(request, conn: conn, logger: logger, url: url)
        // 5. Compare with the truth.
        let firstNight = try checkFirstNight(setting, summary: summary, nights: nights, conn: conn)
        try printFirstNight(summary, request: request, nights: nights, conn: conn)
        for line in firstNight.lines { print("  \(line)") }
        // 6. More nights, and the tie-out.
        var trends: TrendTruthComparison.Report?
        if effectiveNights > 1 {
            trends = try laterNights(
                first: summary,
                request: request,
                simulator: sim,
                arguments: simArguments,
                secret: secret,
                url: url,
                work: work
            )
        }
        let tieOutTruth = try tieOutMonth.map { month in
            try tieOutStep(
                month,
                first: summary.asOf,
                arguments: simArguments,
                secret: secret,
                url: url,
                work: work
            )
        }
        guard firstNight.matches, trends?.matches ?? true, tieOutTruth?.matches ?? true else {
            throw ExitCode.failure
        }
    }

    /// DATABASE_URL when set, else a throwaway PostgreSQL (handed to `started`, which stops it at the end); the
    /// schema migrated.
    private func openDatabase(started: (ThrowawayPostgres) -> Void) throws -> String {
        let url: String
        if let env = ProcessInfo.processInfo.environment["DATABASE_URL"], !env.isEmpty {
            url = env
            step("using DATABASE_URL (\(PostgresConnectionString.redacted(env)))")
        } else {
            step("starting a throwaway PostgreSQL")
            let pg = try ThrowawayPostgres()
            started(pg)
            url = try pg.createDatabase("renewal_demo")
        }
        let source = try MigrationSource.resolve(explicit: nil, builtIn: BuildInfo.migrations)
        let migrated = try Migrator(connectionString: url, source: source).migrate()
        step(
            "schema: \(migrated.isEmpty ? "up to date" : "applied " + migrated.map(\.fileName).joined(separator: ", "))"
        )
        return url
    }

    /// The simulator's export of the app's rows, imported as the app stored them, its price catalog, and the rows a
    /// previous night's run left.
    private func stageApp(_ setting: Setting) throws {
        step(
            "simulator: exporting \(subscriptions) subscriptions (seed \(seed), as of \(RFC3339.string(setting.asOf)))"
        )
        try SimulatorProcess.export(
            binary: setting.simulatorBinary,
            seed: seed,
            subscriptions: subscriptions,
            now: setting.asOf,
            into: setting.work.path,
            extra: forgedArguments + worldArguments
                + (effectiveNights > 1 ? ["--trend-nights", String(effectiveNights)] : [])
        )
        let imported = try Importer(connectionString: setting.url).importFile(
            setting.work.appendingPathComponent("purchases.jsonl").path,
            skipInvalid: false
        )
        guard imported.committed else {
            throw UsageError(
                "import of the simulator's export failed: \(imported.invalid.prefix(5).map(\.description).joined(separator: "; "))"
            )
        }
        step("imported \(imported.inserted) subscriptions")
        // The app's price list, which prices what verifyReceipt reads (docs/reports.md, "Money from the catalog").
        let catalog = try CatalogImporter(connectionString: setting.url).importFile(
            setting.work.appendingPathComponent("catalog.csv").path
        )
        step(
            "price catalog: \(catalog.rows) prices of \(catalog.products) products in \(catalog.currencies.joined(separator: ", "))"
        )
        // Rows a previous night's run left (e.g. revoked before the customer bought again): the import has no state.
        let seedConnection = try PostgresConnection(setting.url)
        defer { seedConnection.close() }
        let seeded = try PriorRunSeeder(connection: seedConnection).seed(truthFile: setting.truthFile)
        if seeded > 0 { step("\(seeded) rows set as a previous night's run left them") }
    }

    /// The simulator's arguments: the same world the export came from, and for the Server API Apple's
    /// per-endpoint limits raised to the demo's rate (the reconciler keeps to the same figures).
    private func simulatorArguments(_ setting: Setting) -> [String] {
        var arguments = [
            "--seed", String(seed), "--subscriptions", String(subscriptions), "--now", RFC3339.string(setting.asOf),
            "--bundle-id", setting.bundleId,
        ]
        if let faults = simulatorFaults { arguments += ["--faults-all", String(faults)] }
        arguments += forgedArguments + worldArguments
        if setting.sourceKind == .serverAPI {
            for limit in ["--max-rps-statuses", "--max-rps-history", "--max-rps-notification-history"] {
                arguments += [limit, String(Int(rate))]
            }
        }
        return arguments
    }

    /// The first night's run request against the started simulator.
    private func firstRequest(
        _ setting: Setting,
        simulator sim: SimulatorProcess
    ) throws
        -> ReconciliationRunner.Request
    {
        var options = RunOptions()
        options.rate = rate
        options.concurrency = concurrency
        options.requestTimeoutSeconds = requestTimeout
        let apple = AppleConfiguration(
            productionURL: sim.productionURL,
            sandboxURL: sim.sandboxURL,
            sharedSecret: Secret(setting.secret),
            bundleId: setting.bundleId
        )
        var app = AppDefinition(bundleId: setting.bundleId, credentials: .verifyReceipt(apple))
        if setting.sourceKind == .serverAPI {
            app.credentials = .serverAPI(
                try Self.simulatorServerAPI(
                    exportDirectory: setting.work.appendingPathComponent("server-api"),
                    baseURL: sim.baseURL,
                    rate: rate
                )
            )
        }
        let through = setting.sourceKind == .serverAPI ? "the App Store Server API" : "verifyReceipt"
        step("nightly run through \(through) (rate \(Int(rate))/s, concurrency \(concurrency))")
        var request = ReconciliationRunner.Request(
            mode: .demo,
            selection: .due(lookaheadSeconds: 86_400, lookbackSeconds: 62 * 86_400, minRecheckSeconds: 20 * 3600),
            options: options,
            apps: [app]
        )
        request.now = setting.asOf
        // A first deployment reads all the notification history Apple keeps (180 days): one-time purchases reach
        // the ledger only through their notifications, and the simulator's truth counts every one.
        request.notificationsLookback = 180 * 86_400
        request.progressStyle = ProgressReporter.style(forTerminalOr: .lines(interval: .seconds(5)))
        request.reportDirectory = reportDir
        request.moneyOptions = try money.moneyOptions()
        return request
    }

    /// With faults, rows a night could not finish (never verified) are due again: more nights at the same instant,
    /// as many as it takes (at most five), like a real week of nights would. Returns the nights run.
    private func repeatUnresolved(
        _ request: ReconciliationRunner.Request,
        conn: PostgresConnection,
        logger: Logger,
        url: String
    ) throws -> Int {
        var nights = 1
        var unresolved = try Self.neverVerified(conn)
        while simulatorFaults != nil, nights < 5, unresolved > 0 {
            nights += 1
            step("night \(nights): \(unresolved) subscriptions left unresolved by faults")
            let later = try ReconciliationRunner(connectionString: url, logger: logger).run(request)
            step("night \(nights): run \(later.runId) \(later.status), \(later.done) of \(later.due) verified")
            unresolved = try Self.neverVerified(conn)
        }
        return nights
    }

    /// The first night's checks: every row against the simulator's truth, the Server API's own checks, and the
    /// catalog's money for a single verifyReceipt night.
    private func checkFirstNight(
        _ setting: Setting,
        summary: ReconciliationRunner.Summary,
        nights: Int,
        conn: PostgresConnection
    ) throws -> (matches: Bool, lines: [String]) {
        var truthComparison = TruthComparison(connection: conn, bundleId: setting.bundleId)
        truthComparison.serverAPI = setting.sourceKind == .serverAPI
        if setting.sourceKind == .serverAPI {
            truthComparison.forgedSubscriptions = try TruthComparison.forgedSubscriptions(
                file: setting.serverAPIExport + "/signature-faults.jsonl"
            )
        }
        let comparison = try truthComparison.compare(truthFile: setting.truthFile)
        var catalogMoney: CatalogComparison.Report?
        if setting.sourceKind == .verifyReceipt && nights == 1 {
            catalogMoney = try CatalogComparison(connection: conn).compare(
                runId: summary.runId,
                exportDirectory: setting.serverAPIExport
            )
        }
        let serverAPIChecks =
            setting.sourceKind == .serverAPI
            ? try DemoServerAPIChecks.run(
                conn,
                export: setting.serverAPIExport,
                truthFile: setting.truthFile,
                runId: summary.runId,
                nights: nights,
                forged: truthComparison.forgedSubscriptions
            ) : nil
        let matches =
            comparison.matched == comparison.compared && comparison.compared == subscriptions
            && serverAPIChecks?.matches ?? true && catalogMoney?.matches ?? true
        return (matches, comparison.lines() + (serverAPIChecks?.lines ?? []) + (catalogMoney?.lines() ?? []))
    }

    /// The first night's summary on stdout: the run, its outcomes, Apple's requests, money per currency, the report.
    private func printFirstNight(
        _ summary: ReconciliationRunner.Summary,
        request: ReconciliationRunner.Request,
        nights: Int,
        conn: PostgresConnection
    ) throws {
        print("")
        print(
            "renewal-reconciler demo: run \(summary.runId) \(summary.status) in \(String(format: "%.1f", summary.stats.elapsedSeconds)) s"
        )
        print("  subscriptions verified: \(summary.done) of \(summary.due)")
        for (outcome, count) in summary.outcomes.sorted(by: { $0.value > $1.value }) {
            print("    \(outcome.rawValue.padding(toLength: 11, withPad: " ", startingAt: 0)) \(count)")
        }
        print(
            "  Apple requests: \(summary.stats.requests) (\(summary.stats.retries) retries, \(summary.stats.environmentSwitches) sandbox/production switches) at \(String(format: "%.0f", summary.stats.achievedRate))/s"
        )
        // Money per currency (ledger prices; catalog estimates for verifyReceipt rows), from the run's report data.
        let moneySummary = try ReportGenerator(connection: conn, moneyOptions: request.moneyOptions)
            .summary(runId: summary.runId).summary
        for line in moneySummary.moneyLines() { print("  \(line)") }
        if let reportPath = summary.reportPath { print("  reports: \(reportPath)") }
        if nights > 1 { print("  nights: \(nights) (faults left rows for the next night)") }
    }

    /// `--nights`: nights 1 through N - 1 (`DemoNights`), a line per night, the trends files and their comparison
    /// with the simulator's truth.
    private func laterNights(
        first: ReconciliationRunner.Summary,
        request: ReconciliationRunner.Request,
        simulator: SimulatorProcess,
        arguments: [String],
        secret: String,
        url: String,
        work: URL
    ) throws -> TrendTruthComparison.Report {
        let nights = DemoNights(
            connectionString: url,
            logger: Logger(label: "renewal-reconciler"),
            simulatorBinary: self.simulator ?? Self.siblingBinary("appstore-simulator"),
            simulatorArguments: arguments,
            sharedSecret: secret,
            start: first.asOf
        )
        print("  nights:")
        print("    \(DemoNights.Night(index: 0, summary: first).line)")
        _ = try nights.runLaterNights(count: effectiveNights, request: request, running: simulator) {
            print("    \($0.line)")
        }
        let trendsFile = (reportDir as NSString).appendingPathComponent(TrendsReport.csvName)
        print("  trends: \((reportDir as NSString).appendingPathComponent(TrendsReport.htmlName)), \(trendsFile)")
        var comparison = TrendTruthComparison(serverAPI: request.apps[0].source == .serverAPI)
        let conn = try PostgresConnection(url)
        defer { conn.close() }
        comparison.firstNightExtras = try TrendTruthComparison.firstNightSweep(
            connection: conn,
            runId: first.runId,
            truthFile: work.appendingPathComponent("truth.jsonl").path
        )
        let report = try comparison.compare(
            trendsFile: trendsFile,
            truthFile: work.appendingPathComponent("trend-truth.jsonl").path
        )
        for line in report.lines() { print("  \(line)") }
        return report
    }

    /// `--tie-out`'s last step (`DemoTieOut`): the month's reports downloaded from the simulator, the
    /// tie-out written into the report directory, its headline and its comparison with the simulator's truth.
    private func tieOutStep(
        _ month: AppleFiscalMonth,
        first: Date,
        arguments: [String],
        secret: String,
        url: String,
        work: URL
    ) throws -> TieOutTruthComparison.Report {
        let binary = simulator ?? Self.siblingBinary("appstore-simulator")
        let nights = DemoNights(
            connectionString: url,
            logger: Logger(label: "renewal-reconciler"),
            simulatorBinary: binary,
            simulatorArguments: arguments,
            sharedSecret: secret,
            start: first
        )
        step("tie-out of fiscal month \(month.name): downloading Apple's reports from the simulator")
        let outcome = try DemoTieOut(
            month: month,
            nights: nights,
            exportDirectory: work,
            reportDirectory: reportDir,
            seed: seed,
            subscriptions: subscriptions,
            worldArguments: worldArguments
        ).run(connectionString: url, sharedSecret: secret, simulatorBinary: binary)
        print("  \(AppleReportsDownloadCommand.summary(outcome.downloads))")
        for line in TieOutCommand.headline(outcome.result) { print("  \(line)") }
        print("  tie-out: \((outcome.directory as NSString).appendingPathComponent(TieOutReport.htmlName))")
        for line in outcome.truth.lines() { print("  \(line)") }
        return outcome.truth
    }

    /// The demo's as-of without `--now`: the latest 23:00 UTC at or before `wallClock`. A first run's period is
    /// the calendar day of its as-of (docs/reports.md, "The period"): at the wall clock's 01:00 it would hold one
    /// hour of money, at 23:00 nearly a day.
    static func defaultAsOf(wallClock: Date) -> Date {
        let seconds = Int64(wallClock.timeIntervalSince1970.rounded(.down))
        let day = seconds - ((seconds % 86_400) + 86_400) % 86_400
        let today = day + 23 * 3600
        return Date(timeIntervalSince1970: TimeInterval(today <= seconds ? today : today - 86_400))
    }

    /// The simulator's arguments (export and serve) for `--forged-subscriptions`.
    private var forgedArguments: [String] {
        forgedSubscriptions.map { ["--signature-faulty-subscriptions", String($0)] } ?? []
    }

    private static func neverVerified(_ conn: PostgresConnection) throws -> Int {
        try conn.queryFirst(
            "SELECT count(*) AS n FROM subscriptions s WHERE NOT EXISTS (SELECT 1 FROM subscription_checks c WHERE c.subscription_id = s.id AND c.last_verified_at IS NOT NULL)"
        )?
        .decode("n", as: Int.self) ?? 0
    }

    /// The App Store Server API settings for the simulator, from what `export` wrote: `api.json` (key id,
    /// issuer id, bundle id, App Apple ID), `key.p8` and `root.pem` (trusted alone, not Apple's root).
    static func simulatorServerAPI(exportDirectory: URL, baseURL: String, rate: Double) throws -> ServerAPISettings {
        let apiFile = exportDirectory.appendingPathComponent("api.json")
        guard let data = FileManager.default.contents(atPath: apiFile.path),
            let api = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let keyId = api["key_id"] as? String, let issuerId = api["issuer_id"] as? String,
            let bundleId = api["bundle_id"] as? String, let appAppleId = (api["app_apple_id"] as? NSNumber)?.int64Value
        else {
            throw ConfigurationError(
                "\(apiFile.path): not the simulator's api.json (key_id, issuer_id, bundle_id, app_apple_id)"
            )
        }
        return try ServerAPISettings.load(
            environment: [:],
            privateKeyFile: exportDirectory.appendingPathComponent("key.p8").path,
            keyId: keyId,
            issuerId: issuerId,
            bundleId: bundleId,
            appAppleId: String(appAppleId),
            productionURL: baseURL,
            sandboxURL: baseURL + "/sandbox",
            rootFiles: [exportDirectory.appendingPathComponent("root.pem").path],
            rootsOnly: true,
            budgets: ServerAPIBudgets(statuses: rate, history: rate, notifications: rate)
        )
    }

    /// A binary built next to this one (`.build/<config>/appstore-simulator`).
    static func siblingBinary(_ name: String) -> String {
        let me = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        return me.deletingLastPathComponent().appendingPathComponent(name).path
    }
}
