import ArgumentParser
import Postgres
import Reconciler

/// `events replay [--subscription-id N]`: dead events pending again (docs/events.md, "Delivery").
struct EventsReplayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Make dead events pending again, with a fresh count of attempts (all, or one subscription's)."
    )

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var logging: LoggingOptions

    @Option(help: "Only this subscription's (subscriptions.id) dead events.")
    var subscriptionId: Int64?

    func run() throws {
        logging.bootstrap()
        try runReportingErrors {
            let conn = try database.migratedConnection()
            defer { conn.close() }
            let store = EventDeliveryStore(connection: conn, owner: "replay", policy: .init())
            print("events: \(try store.replay(subscriptionId: subscriptionId)) dead events pending again")
        }
    }
}
