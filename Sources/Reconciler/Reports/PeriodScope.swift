/// Where a ledger transaction's purchase, or its refund, is counted in a run's report (docs/reports.md,
/// "The period"): in the run's period, as history found (dated before the period, first seen by this run),
/// or in the next run's period (dated after this run's as-of).
public enum PeriodScope: String, Sendable, Equatable, Codable, CaseIterable {
    case period
    case historyFound = "history_found"
    case nextPeriod = "next_period"
}
