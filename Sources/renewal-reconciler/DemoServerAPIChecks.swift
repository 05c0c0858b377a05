import Foundation
import Postgres
import ReconcilerDemo

/// What the demo checks of a night through the App Store Server API beyond the rows (docs/simulator.md): the
/// ledger and its money against `ledger.jsonl` and `revenue.json`, the notifications against
/// `notifications-truth.json`, and on a single night the report's churn, offer-mix and price-increase figures
/// against `truth.jsonl`.
struct DemoServerAPIChecks {
    var ledger: LedgerComparison.Report
    var notifications: NotificationComparison.Report
    var churn: ChurnComparison.Report?

    var matches: Bool { ledger.matches && notifications.matches && (churn?.matches ?? true) }

    var lines: [String] { ledger.lines() + notifications.lines() + (churn?.lines() ?? []) }

    /// Compares the database after run `runId` (the last of `nights` at one instant) with the simulator's export:
    /// `export` its `server-api` folder, `truthFile` its `truth.jsonl`, `forged` the subscriptions it forged.
    static func run(
        _ conn: PostgresConnection,
        export: String,
        truthFile: String,
        runId: Int64,
        nights: Int,
        forged: Set<String>
    ) throws -> DemoServerAPIChecks {
        var ledgerComparison = LedgerComparison(connection: conn)
        ledgerComparison.forgedSubscriptions = forged
        // The period check needs the whole period in one run: later nights at the same instant report what the
        // first left unresolved as history found (docs/reports.md, "The period").
        ledgerComparison.periodRunId = nights == 1 ? runId : nil
        var ledger = try ledgerComparison.compare(exportDirectory: export)
        if nights > 1 { ledger.periodNote = "period money not compared: \(nights) nights split the period" }
        return DemoServerAPIChecks(
            ledger: ledger,
            notifications: try NotificationComparison(connection: conn).compare(
                file: export + "/notifications-truth.json",
                runId: runId
            ),
            churn: nights == 1
                ? try ChurnComparison(connection: conn).compare(truthFile: truthFile, runId: runId, forged: forged)
                : nil
        )
    }
}
