import Foundation

/// How a run talks to Apple and writes results. Defaults are the documented `run` defaults.
public struct RunOptions: Sendable, Codable, Equatable {
    /// Requests per second to Apple, every request counted (switches and retries included).
    public var rate: Double = 50
    /// At most this many requests in flight at once.
    public var concurrency: Int = 64
    /// At most this many retryable failures per item before it ends `unresolved`.
    public var maxAttempts: Int = 5
    /// Results written per database transaction.
    public var batchSize: Int = 200
    /// Verify but write nothing to `subscriptions` or the ledger.
    public var dryRun: Bool = false
    /// Exit 2 when more than this fraction of the selected items end unresolved.
    public var maxUnresolvedFraction: Double = 0.01
    /// Per-request timeouts (seconds).
    public var connectTimeoutSeconds: Double = 5
    public var requestTimeoutSeconds: Double = 30
    /// Backoff between retries of one item (seconds): full jitter on base * 2^(n-1), capped.
    public var backoffBaseSeconds: Double = 0.5
    public var backoffCapSeconds: Double = 30
    /// A Retry-After longer than this makes the item give up (unresolved) rather than stall the run.
    public var maxRetryAfterSeconds: Double = 300
    /// `exclude-old-transactions` in requests (false: the ledger sees every renewal).
    public var excludeOldTransactions: Bool = false
    /// The outage breaker (`OutageBreaker`): this many "Apple unreachable" answers in a row (0: off) and
    /// `outageWindowSeconds` without a good answer stop the run as `partial` (exit 69). Optional in the
    /// stored parameters: runs stored before the breaker resume with the defaults.
    var outageFailuresSetting: Int?
    var outageWindowSecondsSetting: Double?
    /// Days of `reconciliation_items` a completed run keeps when it prunes (`ItemRetention`); optional in the stored
    /// parameters like the breaker's.
    var itemRetentionDaysSetting: Int?

    public var outageFailures: Int {
        get { outageFailuresSetting ?? OutageBreaker.defaultFailures }
        set { outageFailuresSetting = newValue }
    }
    public var outageWindowSeconds: Double {
        get { outageWindowSecondsSetting ?? OutageBreaker.defaultWindowSeconds }
        set { outageWindowSecondsSetting = newValue }
    }

    public var itemRetentionDays: Int {
        get { itemRetentionDaysSetting ?? ItemRetention.defaultDays }
        set { itemRetentionDaysSetting = newValue }
    }

    enum CodingKeys: String, CodingKey {
        case rate, concurrency, maxAttempts, batchSize, dryRun, maxUnresolvedFraction, connectTimeoutSeconds
        case requestTimeoutSeconds, backoffBaseSeconds, backoffCapSeconds, maxRetryAfterSeconds
        case excludeOldTransactions
        case outageFailuresSetting = "outageFailures"
        case outageWindowSecondsSetting = "outageWindowSeconds"
        case itemRetentionDaysSetting = "itemRetentionDays"
    }

    public init() {}
}
