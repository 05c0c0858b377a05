import ArgumentParser
import CivilTime
import Foundation
import Reconciler

struct BackfillCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backfill",
        abstract: "Re-verify an explicit selection of subscriptions (same pipeline as `run`).",
        discussion: """
            Every given filter must hold. At least one filter, or --all, is required. On a terminal a live \
            progress bar shows done/total, rate, ETA and unresolved; elsewhere a progress line every 10 seconds. \
            Backfill asks about every selected subscription, including rejected ones the nightly run leaves \
            resting (run --recheck-rejected); a rejection it gets schedules the next nightly check with the \
            default steps.

            Examples:
              renewal-reconciler backfill --original-transaction-id 1000000123456789
              renewal-reconciler backfill --ids-file ids.txt --dry-run
              renewal-reconciler backfill --product-id com.example.pro.monthly --expires-from 2026-10-01T00:00:00Z
              renewal-reconciler backfill --state billing_retry --state grace_period

            \(ReconcilerExitCode.helpText)
            """
    )

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var pipeline: PipelineOptions
    @OptionGroup var money: MoneyReportOptions
    @OptionGroup var logging: LoggingOptions

    @Option(name: .customLong("original-transaction-id"), help: "Select this original_transaction_id (repeatable).")
    var originalTransactionIds: [String] = []

    @Option(
        help: ArgumentHelp(
            "A file with one original_transaction_id per line (blank lines and # comments ignored).",
            valueName: "path"
        )
    )
    var idsFile: String?

    @Option(name: .customLong("user-id"), help: "Select this user_id (repeatable).")
    var userIds: [String] = []

    @Option(name: .customLong("product-id"), help: "Select this product_id (repeatable).")
    var productIds: [String] = []

    @Option(help: ArgumentHelp("Select expires_at >= this time (RFC 3339).", valueName: "rfc3339"))
    var expiresFrom: String?

    @Option(help: ArgumentHelp("Select expires_at < this time (RFC 3339).", valueName: "rfc3339"))
    var expiresTo: String?

    @Option(
        name: .customLong("state"),
        help:
            "Select this state: active, grace_period, billing_retry, expired, revoked, or unknown (never verified). Repeatable."
    )
    var states: [String] = []

    @Flag(help: "Select every subscription (revoked ones included).")
    var all = false

    static let knownStates = ["active", "grace_period", "billing_retry", "expired", "revoked", "unknown"]

    func validate() throws {
        for state in states where !Self.knownStates.contains(state) {
            throw ValidationError("--state \(state): expected one of \(Self.knownStates.joined(separator: ", "))")
        }
        if let expiresFrom, RFC3339.parse(expiresFrom) == nil {
            throw ValidationError("--expires-from: \(expiresFrom) is not an RFC 3339 timestamp with a zone")
        }
        if let expiresTo, RFC3339.parse(expiresTo) == nil {
            throw ValidationError("--expires-to: \(expiresTo) is not an RFC 3339 timestamp with a zone")
        }
    }

    func run() throws {
        logging.bootstrap()
        try runReportingErrors {
            var ids = originalTransactionIds
            if let idsFile { ids += try IdsFile.read(idsFile) }
            let filter = BackfillFilter(
                originalTransactionIds: ids.isEmpty && idsFile == nil ? nil : ids,
                idsFile: idsFile,
                userIds: userIds.isEmpty ? nil : userIds,
                productIds: productIds.isEmpty ? nil : productIds,
                expiresFrom: expiresFrom.flatMap(RFC3339.parse),
                expiresTo: expiresTo.flatMap(RFC3339.parse),
                states: states.isEmpty ? nil : states,
                all: all
            )
            if filter.isEmpty {
                throw UsageError(
                    "backfill needs a selection: --original-transaction-id, --ids-file, --user-id, --product-id, --expires-from/--expires-to, --state, or --all"
                )
            }
            if all
                && !(filter.originalTransactionIds == nil && filter.userIds == nil && filter.productIds == nil
                    && filter.expiresFrom == nil && filter.expiresTo == nil && filter.states == nil)
            {
                throw UsageError("--all selects everything: do not combine it with other filters")
            }
            let apps = try pipeline.runApps()
            var request = ReconciliationRunner.Request(
                mode: .backfill,
                selection: .backfill(filter),
                options: pipeline.runOptions(),
                apps: apps.apps
            )
            request.appsFile = apps.file
            request.progressStyle = ProgressReporter.style(forTerminalOr: .lines(interval: .seconds(10)))
            try executeRun(request, database: database, pipeline: pipeline, money: money)
        }
    }
}
