import ArgumentParser
import CurlHTTP
import Foundation
import Logging
import Postgres
import Reconciler

/// `events deliver --url URL --secret-file FILE [--once]`: posts the outbox's events (docs/events.md, "Delivery").
struct EventsDeliverCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "deliver",
        abstract: "Post subscription events to a webhook receiver (Standard Webhooks signatures), in order.",
        discussion: """
            One event per POST, its body {"type": "subscription.<kind>", "timestamp": ..., "data": {...}}, with the \
            headers webhook-id (the event's id: deduplicate on it), webhook-timestamp and webhook-signature \
            (v1, HMAC-SHA256 with the whsec_ secret). A 2xx delivers the event; anything else is tried again later \
            (--first-retry, doubling up to --max-retry-delay), and after --max-attempts the event is dead until \
            `events replay`. A subscription's next event waits until the previous one is delivered. Several \
            deliverers (hosts) may run at once: each event is leased to one. At least once: a deliverer killed \
            mid-request sends that event again.

            The secret comes from --secret-file or the systemd credential webhook-secret, never from an argument.

            Exit status with --once: 0 every event due was delivered (some perhaps after a failed try); 69 some \
            failed and stay pending (the receiver is down or refused them: they are tried again later); 1 some are dead (fix the receiver, then \
            `events replay`), or the database failed; 64 bad arguments (a URL that is not https, but to this \
            host); 78 no usable secret.
            """
    )

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var logging: LoggingOptions

    @Option(help: ArgumentHelp("The receiver (https://, or http:// to this host).", valueName: "url"))
    var url: String

    @Option(
        help: ArgumentHelp(
            "File holding the whsec_ secret (else the systemd credential webhook-secret).",
            valueName: "path"
        )
    )
    var secretFile: String?

    @Flag(help: "Deliver what may go now and exit; without it, keep delivering, polling every --poll-interval.")
    var once = false

    @Option(help: ArgumentHelp("Seconds between passes without --once.", valueName: "seconds"))
    var pollInterval: Double = 5

    @Option(help: ArgumentHelp("Seconds allowed for one request.", valueName: "seconds"))
    var requestTimeout: Double = 10

    @Option(help: ArgumentHelp("Seconds before the first retry of a failed event.", valueName: "seconds"))
    var firstRetry: Double = 30

    @Option(help: ArgumentHelp("Longest wait between two attempts, in seconds.", valueName: "seconds"))
    var maxRetryDelay: Double = 3600

    @Option(help: "Attempts before an event is dead (20: about 13 hours with the defaults).")
    var maxAttempts: Int = 20

    @Option(help: "Events leased per database round trip.")
    var batchSize: Int = 100

    @Option(
        help: ArgumentHelp("PEM file of CA certificates the receiver's certificate must chain to.", valueName: "file")
    )
    var caFile: String?

    func validate() throws {
        do { try EventDeliverer.check(url: url) } catch { throw ValidationError(String(describing: error)) }
        for (value, flag) in [
            (pollInterval, "--poll-interval"), (requestTimeout, "--request-timeout"),
            (maxRetryDelay, "--max-retry-delay"),
        ] where !(value > 0 && value <= 86_400) {
            throw ValidationError("\(flag) must be above 0 and at most 86400 seconds")
        }
        guard firstRetry >= 0, firstRetry <= maxRetryDelay else {
            throw ValidationError("--first-retry must be 0 to --max-retry-delay seconds")
        }
        guard (1...1000).contains(maxAttempts) else { throw ValidationError("--max-attempts must be 1 to 1000") }
        guard (1...10_000).contains(batchSize) else { throw ValidationError("--batch-size must be 1 to 10000") }
    }

    func run() throws {
        logging.bootstrap()
        try runReportingErrors {
            let signer = try WebhookSigner(secret: try readSecret())
            let conn = try database.migratedConnection()
            defer { conn.close() }
            let store = EventDeliveryStore(
                connection: conn,
                owner: "\(ProcessInfo.processInfo.hostName):\(getpid())",
                policy: .init(firstRetry: firstRetry, maxRetryDelay: maxRetryDelay, maxAttempts: maxAttempts)
            )
            let deliverer = try EventDeliverer(
                url: url,
                signer: signer,
                store: store,
                http: CurlHTTPClient(configuration: .init(userAgent: "renewal-reconciler-webhooks", caFile: caFile)),
                requestTimeout: requestTimeout,
                batchSize: batchSize,
                logger: Logger(label: "renewal-reconciler")
            )
            repeat {
                let summary = try deliverer.deliverDue()
                let backlog = try store.backlog()
                if once || summary != EventDeliverer.Summary() {
                    print(
                        "events: \(summary.delivered) delivered, \(summary.failed) failed (tried again later), "
                            + "\(summary.dead) dead; pending \(backlog.pending), dead \(backlog.dead)"
                    )
                }
                if once {
                    // Dead: 1. Failed and still pending (not delivered on a later try of the same pass): 69.
                    if summary.dead > 0 { throw ExitCode(ReconcilerExitCode.failure.rawValue) }
                    if summary.failed > 0, backlog.pending > 0 {
                        throw ExitCode(ReconcilerExitCode.appleUnavailable.rawValue)
                    }
                    return
                }
                Thread.sleep(forTimeInterval: pollInterval)
            } while true
        }
    }

    /// The secret's text: --secret-file, else `$CREDENTIALS_DIRECTORY/webhook-secret`.
    func readSecret() throws -> String {
        let path =
            secretFile
            ?? ProcessInfo.processInfo.environment["CREDENTIALS_DIRECTORY"].map { $0 + "/webhook-secret" }
        guard let path else {
            throw ConfigurationError("no webhook secret: give --secret-file or the systemd credential webhook-secret")
        }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw ConfigurationError("the webhook secret file \(path) cannot be read")
        }
        return text
    }
}
