import Postgres

/// One row of `trend_snapshots`: a day's figures for one app, product and currency (docs/reports.md,
/// "Trends across nights"). Amounts are milliunits of `currency`, rounded to its minor unit; nil on the unpriced row
/// (`currency` empty).
public struct TrendRow: Sendable, Equatable {
    /// `YYYY-MM-DD` (UTC).
    public var date: String
    public var bundleId: String
    public var productId: String
    /// ISO 4217 code; empty when the subscriptions have no usable price.
    public var currency: String
    public var runId: Int64?
    public var active: Int
    public var gracePeriod: Int
    public var billingRetry: Int
    public var inTrial: Int
    public var inIntroOffer: Int
    public var newSubscriptions: Int
    public var renewed: Int
    public var lapsed: Int
    public var churned: Int
    public var refunded: Int
    public var reactivated: Int
    public var trialConversions: Int
    public var mrrSubscriptions: Int
    public var mrr: Int64?
    public var mrrNew: Int64?
    public var mrrExpansion: Int64?
    public var mrrContraction: Int64?
    public var mrrChurn: Int64?
    /// `ledger`, `catalog`, `ledger+catalog` or empty.
    public var mrrSource: String
    /// `run` or `rebuild`.
    public var recordedBy: String

    /// The columns `load` reads, in `trend_snapshots`' names.
    static let selectList = """
        to_char(snapshot_date, 'YYYY-MM-DD') AS day, bundle_id, product_id, currency, run_id, active, grace_period,
        billing_retry, in_trial, in_intro_offer, new_subscriptions, renewed, lapsed, churned, refunded, reactivated,
        trial_conversions, mrr_subscriptions, mrr_milliunits, mrr_new_milliunits, mrr_expansion_milliunits,
        mrr_contraction_milliunits, mrr_churn_milliunits, mrr_source, recorded_by
        """

    init(row: PostgresRow) throws {
        date = try row.decode("day")
        bundleId = try row.decode("bundle_id")
        productId = try row.decode("product_id")
        currency = try row.decode("currency")
        runId = try row.decode("run_id")
        active = try row.decode("active")
        gracePeriod = try row.decode("grace_period")
        billingRetry = try row.decode("billing_retry")
        inTrial = try row.decode("in_trial")
        inIntroOffer = try row.decode("in_intro_offer")
        newSubscriptions = try row.decode("new_subscriptions")
        renewed = try row.decode("renewed")
        lapsed = try row.decode("lapsed")
        churned = try row.decode("churned")
        refunded = try row.decode("refunded")
        reactivated = try row.decode("reactivated")
        trialConversions = try row.decode("trial_conversions")
        mrrSubscriptions = try row.decode("mrr_subscriptions")
        mrr = try row.decode("mrr_milliunits")
        mrrNew = try row.decode("mrr_new_milliunits")
        mrrExpansion = try row.decode("mrr_expansion_milliunits")
        mrrContraction = try row.decode("mrr_contraction_milliunits")
        mrrChurn = try row.decode("mrr_churn_milliunits")
        mrrSource = try row.decode("mrr_source")
        recordedBy = try row.decode("recorded_by")
    }

    /// The rows of the `days` days ending on the newest snapshot date, by date, app, product and currency.
    public static func load(_ db: PostgresConnection, days: Int) throws -> [TrendRow] {
        try db.query(
            """
            SELECT \(selectList) FROM trend_snapshots
             WHERE snapshot_date > (SELECT max(snapshot_date) FROM trend_snapshots) - $1::int
             ORDER BY snapshot_date, bundle_id, product_id, currency
            """,
            [Int64(max(1, days))]
        ).map(TrendRow.init(row:))
    }
}
