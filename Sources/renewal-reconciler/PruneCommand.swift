import ArgumentParser
import CivilTime
import Foundation
import Postgres
import Reconciler

struct PruneCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prune",
        abstract: "Delete the items of runs older than the retention (every completed run does it too).",
        discussion: """
            Deletes the reconciliation_items of finished runs whose as-of is more than --item-retention-days \
            before now, keeping each subscription's newest decided item among them (what the trend snapshots read \
            for a subscription not decided since). Runs still running or interrupted keep every item; the runs \
            themselves, the ledger, notifications and trend snapshots are never deleted. Running it twice deletes \
            nothing the second time. docs/operations.md, "Retention".
            """
    )

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var logging: LoggingOptions

    @Option(help: ArgumentHelp("Days of items to keep.", valueName: "days"))
    var itemRetentionDays: Int = ItemRetention.defaultDays

    @Option(help: ArgumentHelp("Prune as of this time (RFC 3339). Default: now.", valueName: "rfc3339"))
    var now: String?

    func validate() throws {
        try SettingBounds.itemRetentionDays.validate(itemRetentionDays, flag: "--item-retention-days")
        if let now, RFC3339.parse(now) == nil {
            throw ValidationError("--now: not an RFC 3339 time: \(now.prefix(60))")
        }
    }

    func run() throws {
        logging.bootstrap()
        try runReportingErrors {
            let conn = try database.migratedConnection()
            defer { conn.close() }
            let asOf = now.flatMap(RFC3339.parse) ?? Date()
            let pruned = try ItemRetention(days: itemRetentionDays).prune(conn, now: asOf)
            print(
                "pruned \(pruned.items) item(s) of runs before \(RFC3339.string(pruned.before)) "
                    + "(\(pruned.runs) run(s) pruned now); \(pruned.kept) kept as subscriptions' newest decided items"
            )
        }
    }
}
