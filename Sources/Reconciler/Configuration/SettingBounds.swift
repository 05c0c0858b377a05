/// The one place that holds the bounds of every numeric setting: the flags of every command and the apps file's
/// `rate` (docs/operations.md, "Bounds of every numeric setting", lists them with their defaults). The flag
/// parsing and the apps file both check against these, so a rule is never written twice.
///
/// The bounds are far beyond what an operator needs, and small enough that every later conversion is safe:
/// a rate's `floor` and `1e9 / rate` fit an `Int` and a `UInt64`; a timeout or heartbeat in milliseconds fits
/// Dispatch's `Int`; a selection window added to the run's as-of time stays a PostgreSQL timestamp; a retry's
/// `2^attempt` backoff is capped long before it overflows.
public enum SettingBounds {
    /// `--rate`, `--statuses-rate`, `--history-rate`, `--notifications-rate`, `demo --rate` and an app's `rate`
    /// in the apps file: one request every 10 s at the least.
    public static let rate = NumericBound(0.1, 1_000_000, .perSecond)
    /// `--request-timeout`, `--connect-timeout`: at least 0.1 s (libcurl reads 0 ms as "no timeout").
    public static let timeout = NumericBound(0.1, 3_600, .seconds)
    /// `--concurrency` (`run`, `backfill`, `demo`): requests in flight, each its own connection.
    public static let concurrency = NumericBound(1, 1_024, .count)
    /// `--max-attempts`: retryable failures per subscription before it ends unresolved.
    public static let maxAttempts = NumericBound(1, 100, .count)
    /// `--batch-size`: results per database transaction.
    public static let batchSize = NumericBound(1, 10_000, .count)
    /// `--max-unresolved`: a fraction of the selected subscriptions.
    public static let maxUnresolved = NumericBound(0, 1, .fraction)
    /// `--outage-failures`: "Apple unreachable" answers in a row (0: the breaker is off).
    public static let outageFailures = NumericBound(0, 1_000_000, .count)
    /// `--outage-window`.
    public static let outageWindow = NumericBound(0, 7 * 86_400, .duration)
    /// `--notifications-lookback`: Apple keeps 180 days of notification history.
    public static let notificationsLookback = NumericBound(1, 180 * 86_400, .duration)
    /// `run --lookahead`, `--lookback`, `--min-recheck`, `--recheck-revoked`: ten years.
    public static let selectionWindow = NumericBound(0, 3_650 * 86_400, .duration)
    /// Each step of `run --recheck-rejected`.
    public static let recheckRejectedStep = NumericBound(1, 3_650 * 86_400, .duration)
    /// `run --sweep-days` (0: no sweep).
    public static let sweepDays = NumericBound(0, 3_650, .count)
    /// `run --heartbeat`: a worker renews its leases this often.
    public static let heartbeat = NumericBound(1, 3_600, .duration)
    /// `run --lease-timeout`: also at least `heartbeatsPerLease` heartbeats.
    public static let leaseTimeout = NumericBound(3, 86_400, .duration)
    /// A lease lasts at least this many heartbeats, so one late heartbeat never loses a live worker's items.
    public static let heartbeatsPerLease: Double = 3
    /// `run --join-window` (0: always start a worker run).
    public static let joinWindow = NumericBound(0, 7 * 86_400, .duration)
    /// `run`/`backfill`/`prune --item-retention-days`: at least a week, so a night's resume, report and the trend
    /// snapshot's previous day always find their items; 36500 keeps them a century.
    public static let itemRetentionDays = NumericBound(7, 36_500, .count)
    /// `report --trends --days`.
    public static let trendDays = NumericBound(1, 3_660, .count)
    /// `runs --limit`.
    public static let runsLimit = NumericBound(1, 100_000, .count)
    /// `compare-truth --limit` (0: print no mismatch, only the counts).
    public static let mismatchLimit = NumericBound(0, 1_000_000, .count)
    /// `demo --subscriptions`.
    public static let demoSubscriptions = NumericBound(1, 10_000_000, .count)
    /// `demo --nights`.
    public static let demoNights = NumericBound(1, 366, .count)
    /// `demo --simulator-faults`, `demo --forged-subscriptions`.
    public static let share = NumericBound(0, 1, .fraction)

    /// Every setting and its bound, for the docs check (docs/operations.md lists each of them).
    public static let all: [(setting: String, bound: NumericBound)] = [
        ("--rate", rate), ("--statuses-rate", rate), ("--history-rate", rate), ("--notifications-rate", rate),
        ("rate", rate), ("--request-timeout", timeout), ("--connect-timeout", timeout),
        ("--concurrency", concurrency), ("--max-attempts", maxAttempts), ("--batch-size", batchSize),
        ("--max-unresolved", maxUnresolved), ("--outage-failures", outageFailures), ("--outage-window", outageWindow),
        ("--notifications-lookback", notificationsLookback), ("--lookahead", selectionWindow),
        ("--lookback", selectionWindow), ("--min-recheck", selectionWindow), ("--recheck-revoked", selectionWindow),
        ("--recheck-rejected", recheckRejectedStep), ("--sweep-days", sweepDays), ("--heartbeat", heartbeat),
        ("--lease-timeout", leaseTimeout), ("--join-window", joinWindow), ("--days", trendDays),
        ("--item-retention-days", itemRetentionDays),
        ("--limit", runsLimit), ("--limit", mismatchLimit), ("--subscriptions", demoSubscriptions),
        ("--nights", demoNights), ("--simulator-faults", share), ("--forged-subscriptions", share),
    ]

    /// Why a lease of `leaseSeconds` is too short for heartbeats every `heartbeatSeconds`; nil when it is not.
    public static func leaseProblem(leaseSeconds: Double, heartbeatSeconds: Double) -> String? {
        guard leaseSeconds < heartbeatsPerLease * heartbeatSeconds else { return nil }
        return "--lease-timeout must be at least \(NumericBound.numberText(heartbeatsPerLease)) heartbeats "
            + "(--heartbeat \(NumericBound.durationText(heartbeatSeconds)): at least "
            + "\(NumericBound.durationText(heartbeatsPerLease * heartbeatSeconds))), got "
            + NumericBound.durationText(leaseSeconds)
    }
}
