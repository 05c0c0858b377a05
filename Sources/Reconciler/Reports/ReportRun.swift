import CivilTime
import Foundation

/// One row of `reconciliation_runs` as the reports read it: what kind of run it was, when, and how it ended.
///
/// Reports are rebuilt from the database alone, so this carries every run-level fact the
/// summary, the HTML page and the metrics file show.
public struct ReportRun: Sendable, Equatable {
    public var id: Int64
    /// `nightly`, `backfill` or `demo`.
    public var mode: String
    public var dryRun: Bool
    /// `running`, `completed`, `partial`, `failed` or `interrupted`.
    public var status: String
    public var asOf: Date
    public var startedAt: Date
    public var finishedAt: Date?
    public var dueCount: Int
    public var doneCount: Int
    public var unresolvedCount: Int
    public var exitCode: Int?
    public var appleStats: AppleRequestStats
    /// Rows the nightly scan left out because of the rejected schedule, and the earliest next check among
    /// them (`reconciliation_runs.not_due_rejected_count`, `not_due_rejected_next`; nil when not counted).
    public var notDueRejected: Int?
    public var notDueRejectedNext: Date?
    /// The sweep's plan (`reconciliation_runs.sweep_eligible_count`, `sweep_quota`): the verified, non-revoked
    /// rows when it started and how many of them it was to take; nil when the run planned no sweep.
    public var sweepEligible: Int?
    public var sweepQuota: Int?
    /// Start of the report's period (`reconciliation_runs.period_start`, or computed the same way for a run
    /// from before migration 009); nil for a run built in memory without one. See `ReportPeriod`.
    public var periodStart: Date?
    /// The previous completed run that starts the period (nil: the calendar day of the as-of).
    public var periodPreviousRunId: Int64?
    /// The smallest run id that can have first seen a transaction dated in the period: the previous run, or an
    /// older one still running after the previous run's as-of (0 when there is no previous run). Bounds the
    /// ledger rows the report reads.
    public var periodScanFromRunId: Int64 = 0
    /// The bundle ids the run was configured for (the apps of `--apps`, or its `--bundle-id`); nil when the run
    /// named none. The metrics file keeps a series per configured app only (docs/reports.md, "Metrics file").
    public var configuredApps: [String]?
    /// When `ItemRetention` pruned the run's items (docs/operations.md, "Retention"): its item counts are then
    /// incomplete (the report written that night is not).
    public var itemsPrunedAt: Date?

    /// The report's period, when its start is known.
    public var period: ReportPeriod? {
        periodStart.map { ReportPeriod(start: $0, end: asOf, previousRunId: periodPreviousRunId) }
    }

    /// Wall time of the run in seconds, when it has finished.
    public var durationSeconds: Double? {
        finishedAt.map { max(0, $0.timeIntervalSince(startedAt)) }
    }

    /// True when the run finished cleanly: status `completed` and exit code 0.
    public var succeeded: Bool { status == RunStatus.completed.rawValue && exitCode == 0 }

    /// The report folder's name: `<as_of date in UTC>_run-<id>`, e.g. `2024-05-01_run-42`.
    public var folderName: String { "\(RFC3339.day(asOf))_run-\(id)" }
}
