import ArgumentParser

/// `renewal-reconciler notifications ...`: App Store Server Notifications outside a run.
struct NotificationsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notifications",
        abstract: "App Store Server Notifications: import what an app's own webhook stored.",
        discussion: """
            Each run reads Get Notification History itself (when an In-App Purchase key is configured); \
            `notifications import` takes notifications from elsewhere through the same verification.
            """,
        subcommands: [NotificationsImportCommand.self]
    )
}
