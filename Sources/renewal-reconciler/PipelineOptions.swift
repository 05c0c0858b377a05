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

    @Option(help: "The app's bundle id (overrides APPLE_BUNDLE_ID); receipts of other apps are rejected.")
    var bundleId: String?

    @Option(
        help: ArgumentHelp(
            "File holding the App Store shared secret (overrides APPLE_SHARED_SECRET_FILE).",
            valueName: "path"
        )
    )
    var sharedSecretFile: String?

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
        guard rate > 0, rate.isFinite else {
            throw ValidationError("--rate must be a positive number of requests per second")
        }
        guard concurrency >= 1 else { throw ValidationError("--concurrency must be at least 1") }
        guard maxAttempts >= 1 else { throw ValidationError("--max-attempts must be at least 1") }
        guard (1...10_000).contains(batchSize) else {
            throw ValidationError("--batch-size must be between 1 and 10000")
        }
        guard (0...1).contains(maxUnresolved) else {
            throw ValidationError("--max-unresolved is a fraction between 0 and 1")
        }
        guard requestTimeout > 0, connectTimeout > 0 else { throw ValidationError("timeouts must be positive") }
        if let now, RFC3339.parse(now) == nil {
            throw ValidationError("--now: \(now) is not an RFC 3339 timestamp with a zone (e.g. 2026-11-21T02:30:00Z)")
        }
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
        return o
    }

    func appleConfiguration() throws -> AppleConfiguration {
        let config = try AppleConfiguration.load(
            productionURL: verifyURL,
            sandboxURL: sandboxVerifyURL,
            bundleId: bundleId,
            sharedSecretFile: sharedSecretFile,
            excludeOldTransactions: excludeOldTransactions
        )
        Redactor.shared.register(config.sharedSecret.value)
        guard config.bundleId != nil else {
            throw ConfigurationError(
                "no bundle id: set APPLE_BUNDLE_ID or pass --bundle-id (receipts of other apps must be rejected)"
            )
        }
        return config
    }
}
