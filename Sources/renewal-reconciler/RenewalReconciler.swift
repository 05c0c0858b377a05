import ArgumentParser
import Foundation
import Reconciler

/// `renewal-reconciler`: keeps iOS auto-renewable subscriptions true by re-verifying stored receipts with Apple.
@main
struct RenewalReconciler: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "renewal-reconciler",
        abstract: "Re-verify stored App Store receipts with Apple and keep subscriptions in PostgreSQL true.",
        discussion: """
            Apple renews subscriptions silently: no notification arrives when a renewal succeeds, refunds and \
            billing failures are easy to miss, and the receipt stored at purchase goes stale. Run `run` nightly \
            (cron or the systemd timer in cron/): it selects subscriptions near or past their expiry, \
            re-verifies each stored receipt with Apple's verifyReceipt under a strict rate limit, saves the \
            newest receipt and expiry, and writes reports.

            Environment (flags override it; the shared secret is never taken from a flag):
              DATABASE_URL              libpq connection string or URI
                                        (password: PGPASSWORD or ~/.pgpass)
              APPLE_SHARED_SECRET_FILE  file holding the app-specific shared secret
              APPLE_SHARED_SECRET       the shared secret itself
              APPLE_BUNDLE_ID           the app's bundle id (other apps' receipts
                                        are rejected)
              APPLE_VERIFY_URL          production verifyReceipt URL
              APPLE_SANDBOX_VERIFY_URL  sandbox verifyReceipt URL

            \(ReconcilerExitCode.helpText)
            """,
        version: "0.1.0",
        subcommands: [
            MigrateCommand.self,
            ImportCommand.self,
            RunCommand.self,
            BackfillCommand.self,
            ExplainCommand.self,
            ReportCommand.self,
            RunsCommand.self,
            DemoCommand.self,
        ]
    )
}
