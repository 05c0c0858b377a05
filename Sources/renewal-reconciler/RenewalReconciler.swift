import ArgumentParser
import Foundation
import Reconciler

#if canImport(Glibc)
import Glibc
#endif

/// The process entry point: tunes the allocator, then runs the command line.
@main
enum Entry {
    static func main() {
        #if canImport(Glibc)
        // Dispatch spreads work over many threads and glibc gives each its own malloc arena; with
        // receipt-sized allocations the arenas kept growing with the run (123 MB at 10,000 subscriptions,
        // 185 MB at 200,000). Two arenas keep the peak flat (see BENCHMARKS.md).
        // mallopt(M_ARENA_MAX = -8, 2), looked up at run time (malloc.h is not in Swift's Glibc module).
        if let symbol = dlsym(nil, "mallopt") {
            typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
            _ = unsafeBitCast(symbol, to: Mallopt.self)(-8, 2)
        }
        #endif
        RenewalReconciler.main()
    }
}

/// `renewal-reconciler`: keeps iOS auto-renewable subscriptions true by re-verifying stored receipts with Apple.
struct RenewalReconciler: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "renewal-reconciler",
        abstract: "Re-verify stored App Store receipts with Apple and keep subscriptions in PostgreSQL true.",
        discussion: """
            Apple renews subscriptions silently: no notification arrives when a renewal succeeds, refunds and \
            billing failures are easy to miss, and the receipt stored at purchase goes stale. Run `run` nightly \
            (the Debian package's renewal-reconciler.timer, or cron): it selects subscriptions near or past their expiry, \
            asks Apple about each under a strict rate limit (the App Store Server API when an In-App Purchase \
            key is configured, which also reads Apple's notification history so a refund mid-period is seen; \
            else verifyReceipt with the shared secret), saves the newest receipt, signed data and expiry, and \
            writes reports. docs/server-api.md explains moving to the App Store Server API.

            Environment (flags override it; the shared secret is never taken from a flag):
              DATABASE_URL              libpq connection string or URI
                                        (password: PGPASSWORD or ~/.pgpass)
              APPLE_SHARED_SECRET_FILE  file holding the app-specific shared secret
              APPLE_SHARED_SECRET       the shared secret itself
              APPLE_BUNDLE_ID           the app's bundle id (other apps' receipts
                                        are rejected)
              APPLE_VERIFY_URL          production verifyReceipt URL
              APPLE_SANDBOX_VERIFY_URL  sandbox verifyReceipt URL
              APPLE_ROOT_CA_FILE        extra trusted root(s) for signed App Store
                                        data (PEM or DER; several joined by :)
              APPLE_PRIVATE_KEY_FILE    App Store Server API key (.p8); also the
                                        systemd credential apple-private-key
              APPLE_KEY_ID, APPLE_ISSUER_ID  App Store Server API key and issuer ids
              APPLE_APP_APPLE_ID        the app's App Apple ID (Server API, production)
              APPLE_SOURCE              auto (default), server-api or verify-receipt
              APPLE_SERVER_API_URL, APPLE_SERVER_API_SANDBOX_URL
                                        App Store Server API base URLs

            \(ReconcilerExitCode.helpText)
            """,
        version: Release.versionLine,
        subcommands: [
            VersionCommand.self,
            MigrateCommand.self,
            ImportCommand.self,
            ProductsCommand.self,
            RunCommand.self,
            NotificationsCommand.self,
            BackfillCommand.self,
            ExplainCommand.self,
            CustomerCommand.self,
            EventsCommand.self,
            CheckAPIKeyCommand.self,
            ReportCommand.self,
            RunsCommand.self,
            PruneCommand.self,
            AppleReportsCommand.self,
            TieOutCommand.self,
            DemoCommand.self,
            CompareTruthCommand.self,
        ]
    )
}
