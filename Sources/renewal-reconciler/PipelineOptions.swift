import ArgumentParser
import CivilTime
import Foundation
import Reconciler

/// Flags shared by `run`, `backfill` and `demo`: how to talk to Apple and how hard.
struct PipelineOptions: ParsableArguments {
    @Option(help: "Requests per second to Apple; every request counts (environment switches and retries too).")
    var rate: Double = 50

    @Option(help: "At most this many requests in flight at once.")
    var concurrency: Int = 64

    @Option(help: "Retryable failures per subscription before it ends unresolved (row untouched, due again next run).")
    var maxAttempts: Int = 5

    @Option(help: "Results written per database transaction.")
    var batchSize: Int = 200

    @Option(
        help: ArgumentHelp(
            "Stop the run (partial, exit 69, unfinished items pending for --resume) when Apple has given no good "
                + "answer for this long and --outage-failures answers in a row were transport failures or 5xx.",
            valueName: "duration"
        )
    )
    var outageWindow: DurationArgument = DurationArgument(argument: "2m")!

    @Option(
        help:
            "\"Apple unreachable\" answers in a row (transport failures, 5xx) needed, with --outage-window, to stop the run (0: never)."
    )
    var outageFailures: Int = OutageBreaker.defaultFailures

    @Option(
        help: ArgumentHelp(
            "After a completed run, delete the items of runs older than this many days, keeping each "
                + "subscription's newest decided one (docs/operations.md, \"Retention\").",
            valueName: "days"
        )
    )
    var itemRetentionDays: Int = ItemRetention.defaultDays

    @Option(help: "Exit 2 when more than this fraction of the selected subscriptions end unresolved (0.01 = 1%).")
    var maxUnresolved: Double = 0.01

    @Option(help: "Per-request total timeout in seconds.")
    var requestTimeout: Double = 30

    @Option(help: "Per-request connect timeout in seconds.")
    var connectTimeout: Double = 5

    @Flag(
        help:
            "Verify with Apple but write nothing to subscriptions or the ledger; results and reports are still produced and marked as a dry run."
    )
    var dryRun = false

    @Flag(help: "Send exclude-old-transactions=true (smaller responses; the ledger then misses intermediate renewals).")
    var excludeOldTransactions = false

    @Option(
        help: ArgumentHelp(
            "Evaluate as of this time (RFC 3339), for tests and reproductions. Default: now.",
            valueName: "rfc3339"
        )
    )
    var now: String?

    @Option(help: ArgumentHelp("Apple's production verifyReceipt URL (overrides APPLE_VERIFY_URL).", valueName: "url"))
    var verifyURL: String?

    @Option(
        help: ArgumentHelp("Apple's sandbox verifyReceipt URL (overrides APPLE_SANDBOX_VERIFY_URL).", valueName: "url")
    )
    var sandboxVerifyURL: String?

    @Option(
        help: ArgumentHelp(
            "The app's bundle id (overrides APPLE_BUNDLE_ID); rows of other bundle ids end no_app, receipts of "
                + "other apps are rejected."
        )
    )
    var bundleId: String?

    @Option(
        help: ArgumentHelp(
            "JSON file listing several apps, each with its bundle id, source, credentials and rate "
                + "(docs/operations.md, \"Several apps\"); replaces the one-app settings.",
            valueName: "path"
        )
    )
    var apps: String?

    @Option(
        help: ArgumentHelp(
            "File holding the App Store shared secret (overrides APPLE_SHARED_SECRET_FILE).",
            valueName: "path"
        )
    )
    var sharedSecretFile: String?

    @Option(
        help: ArgumentHelp(
            "How to ask Apple: auto (the App Store Server API when an In-App Purchase key is configured, else "
                + "verifyReceipt), server-api, verify-receipt (overrides APPLE_SOURCE).",
            valueName: "source"
        )
    )
    var source: String?

    @Option(help: ArgumentHelp("The In-App Purchase key's id (overrides APPLE_KEY_ID).", valueName: "id"))
    var keyId: String?

    @Option(help: ArgumentHelp("The App Store Connect issuer id (overrides APPLE_ISSUER_ID).", valueName: "id"))
    var issuerId: String?

    @Option(
        help: ArgumentHelp("The .p8 In-App Purchase key file (overrides APPLE_PRIVATE_KEY_FILE).", valueName: "file")
    )
    var privateKeyFile: String?

    @Option(help: ArgumentHelp("The app's Apple ID (overrides APPLE_APP_APPLE_ID).", valueName: "number"))
    var appAppleId: String?

    @Option(
        name: .customLong("server-api-url"),
        help: ArgumentHelp(
            "App Store Server API production base URL (overrides APPLE_SERVER_API_URL).",
            valueName: "url"
        )
    )
    var serverAPIURL: String?

    @Option(
        name: .customLong("server-api-sandbox-url"),
        help: ArgumentHelp(
            "App Store Server API sandbox base URL (overrides APPLE_SERVER_API_SANDBOX_URL).",
            valueName: "url"
        )
    )
    var serverAPISandboxURL: String?

    @Option(
        name: .customLong("root-ca"),
        help: ArgumentHelp(
            "Also trust this root (PEM or DER) for signed data; repeatable (adds to APPLE_ROOT_CA_FILE).",
            valueName: "file"
        )
    )
    var rootCA: [String] = []

    @Flag(name: .customLong("root-ca-only"), help: "Trust only the --root-ca / APPLE_ROOT_CA_FILE roots, not Apple's.")
    var rootCAOnly = false

    @Option(
        name: .customLong("ca-file"),
        help: ArgumentHelp(
            "PEM file of the CA certificates HTTPS connections to Apple must chain to, instead of the system's "
                + "(overrides APPLE_CA_FILE; not the signed-data roots of --root-ca).",
            valueName: "file"
        )
    )
    var caFile: String?

    @Option(
        help:
            "Get All Subscription Statuses requests per second (Apple's production figure; sandbox a tenth; --rate caps it)."
    )
    var statusesRate: Double = ServerAPIBudgets.appleProductionRate

    @Option(help: "Get Transaction History requests per second (Apple's production figure; --rate caps it).")
    var historyRate: Double = ServerAPIBudgets.appleProductionRate

    @Option(help: "Get Notification History requests per second (Apple's production figure; --rate caps it).")
    var notificationsRate: Double = ServerAPIBudgets.appleProductionRate

    @Option(
        help: ArgumentHelp(
            "The first read of notification history looks back this far (at most 180d).",
            valueName: "duration"
        )
    )
    var notificationsLookback: DurationArgument = DurationArgument(argument: "7d")!

    @Option(help: ArgumentHelp("Write the run's reports under this directory.", valueName: "dir"))
    var reportDir: String = "./reports"

    @Option(
        help: ArgumentHelp(
            "Write Prometheus metrics (textfile collector format) here at the end of the run.",
            valueName: "path"
        )
    )
    var metricsFile: String?

    func validate() throws {
        if apps != nil {
            let oneApp: [(String, Bool)] = [
                ("--bundle-id", bundleId != nil), ("--source", source != nil),
                ("--shared-secret-file", sharedSecretFile != nil), ("--private-key-file", privateKeyFile != nil),
                ("--key-id", keyId != nil),
            ]
            if let (flag, _) = oneApp.first(where: { $0.1 }) {
                throw ValidationError("--apps names each app's settings; \(flag) cannot be combined with it")
            }
        }
        try validateBounds()
        if let source, AppleSourceKind(rawValue: source) == nil {
            throw ValidationError("--source must be auto, server-api or verify-receipt, not \(source)")
        }
        if let now, RFC3339.parse(now) == nil {
            throw ValidationError("--now: \(now) is not an RFC 3339 timestamp with a zone (e.g. 2026-11-21T02:30:00Z)")
        }
    }

    /// Every numeric flag within its bound (`SettingBounds`, docs/operations.md, "Bounds of every numeric setting").
    private func validateBounds() throws {
        for (flag, value) in [
            ("--rate", rate), ("--statuses-rate", statusesRate), ("--history-rate", historyRate),
            ("--notifications-rate", notificationsRate),
        ] {
            try SettingBounds.rate.validate(value, flag: flag)
        }
        try SettingBounds.concurrency.validate(concurrency, flag: "--concurrency")
        try SettingBounds.maxAttempts.validate(maxAttempts, flag: "--max-attempts")
        try SettingBounds.batchSize.validate(batchSize, flag: "--batch-size")
        try SettingBounds.maxUnresolved.validate(maxUnresolved, flag: "--max-unresolved")
        try SettingBounds.outageFailures.validate(outageFailures, flag: "--outage-failures")
        try SettingBounds.outageWindow.validate(outageWindow, flag: "--outage-window")
        try SettingBounds.itemRetentionDays.validate(itemRetentionDays, flag: "--item-retention-days")
        try SettingBounds.timeout.validate(requestTimeout, flag: "--request-timeout")
        try SettingBounds.timeout.validate(connectTimeout, flag: "--connect-timeout")
        try SettingBounds.notificationsLookback.validate(notificationsLookback, flag: "--notifications-lookback")
    }

    var asOf: Date? { now.flatMap(RFC3339.parse) }

    func runOptions() -> RunOptions {
        var o = RunOptions()
        o.rate = rate
        o.concurrency = concurrency
        o.maxAttempts = maxAttempts
        o.batchSize = batchSize
        o.maxUnresolvedFraction = maxUnresolved
        o.requestTimeoutSeconds = requestTimeout
        o.connectTimeoutSeconds = connectTimeout
        o.dryRun = dryRun
        o.excludeOldTransactions = excludeOldTransactions
        o.outageFailures = outageFailures
        o.outageWindowSeconds = outageWindow.seconds
        o.itemRetentionDays = itemRetentionDays
        return o
    }

    /// The apps the run reconciles, checked complete (docs/architecture.md, "Several apps"): those of `--apps FILE`
    /// (their shared secrets registered with the redactor), or the one app of the environment and flags.
    /// - Throws: `ConfigurationError` (exit 78) naming the file, the app or the setting at fault.
    /// `resumed`: the source stored with the run being resumed, which wins over `auto` (not over `--source` or
    /// `APPLE_SOURCE`).
    func runApps(resumed: AppleSourceKind? = nil) throws -> (apps: [AppDefinition], file: String?) {
        guard let apps else { return ([try oneApp(resumed: resumed)], nil) }
        let definitions = try AppsFile.load(path: apps)
        for definition in definitions {
            if let secret = definition.apple?.sharedSecret.value { Redactor.shared.register(secret) }
        }
        return (definitions, apps)
    }

    /// The one app of the environment and flags: verifyReceipt with the shared secret, or the App Store Server API
    /// with the In-App Purchase key (`--source`, else the key when one is configured). A key configured beside a
    /// verifyReceipt app is kept for notification history, which either source reads.
    private func oneApp(resumed: AppleSourceKind?) throws -> AppDefinition {
        var flag = source.flatMap(AppleSourceKind.init(rawValue:))
        if flag == nil, ProcessInfo.processInfo.environment["APPLE_SOURCE", default: ""].isEmpty, let resumed {
            flag = resumed
        }
        let kind = try ServerAPISettings.resolveSource(flag: flag, privateKeyFile: privateKeyFile)
        var serverAPI: ServerAPISettings?
        if kind == .serverAPI || ServerAPISettings.keyConfigured(privateKeyFile: privateKeyFile) {
            serverAPI = try ServerAPISettings.load(
                privateKeyFile: privateKeyFile,
                keyId: keyId,
                issuerId: issuerId,
                bundleId: bundleId,
                appAppleId: appAppleId,
                productionURL: serverAPIURL,
                sandboxURL: serverAPISandboxURL,
                rootFiles: rootCA,
                rootsOnly: rootCAOnly,
                budgets: ServerAPIBudgets(
                    statuses: statusesRate,
                    history: historyRate,
                    notifications: notificationsRate
                )
            )
        }
        if kind == .serverAPI, let serverAPI {
            return AppDefinition(bundleId: serverAPI.api.bundleId, credentials: .serverAPI(serverAPI))
        }
        let (apple, bundle) = try appleConfiguration()
        return AppDefinition(bundleId: bundle, credentials: .verifyReceipt(apple, notifications: serverAPI))
    }

    /// verifyReceipt's settings and the app's bundle id (required: receipts of other apps must be rejected).
    private func appleConfiguration() throws -> (AppleConfiguration, bundleId: String) {
        let config = try AppleConfiguration.load(
            productionURL: verifyURL,
            sandboxURL: sandboxVerifyURL,
            bundleId: bundleId,
            sharedSecretFile: sharedSecretFile,
            excludeOldTransactions: excludeOldTransactions
        )
        Redactor.shared.register(config.sharedSecret.value)
        guard let bundle = config.bundleId else {
            throw ConfigurationError(
                "no bundle id: set APPLE_BUNDLE_ID or pass --bundle-id (receipts of other apps must be rejected)"
            )
        }
        return (config, bundle)
    }
}
