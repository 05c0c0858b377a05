import ArgumentParser

/// `renewal-reconciler events ...`: the outbox of subscription changes (docs/events.md).
struct EventsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events",
        abstract: "Deliver the subscription events (subscription_events) to the app's other systems by webhook.",
        discussion: """
            Every change a run writes to a subscription is also written, in the same transaction, as events in \
            subscription_events (docs/events.md). `events deliver` posts them to a receiver, signed as Standard \
            Webhooks says; `events replay` gives dead ones another round; `events export` writes them for a warehouse.
            """,
        subcommands: [EventsDeliverCommand.self, EventsReplayCommand.self, EventsExportCommand.self]
    )
}
