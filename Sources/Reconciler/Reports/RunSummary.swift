import CivilTime
import Foundation

/// The content of `summary.json` (schema version 1): one run's counts, Apple request statistics and
/// money figures, computed from `ReportData` alone.
///
/// Also the input of the HTML page and the metrics file, so every output agrees on every number.
/// The schema is documented in docs/reports.md ("`summary.json`").
public struct RunSummary: Sendable, Equatable, Codable {
    /// Bumped on any incompatible change of this file's shape.
    public static let currentSchemaVersion = 1

    public var schemaVersion: Int
    public var runId: Int64
    public var mode: String
    public var status: String
    public var dryRun: Bool
    public var asOf: String
    public var startedAt: String
    public var finishedAt: String?
    public var durationSeconds: Double?
    public var exitCode: Int?
    /// Name of the exit code (`success`, `failure`, `unresolved_above_threshold`, ...), `unknown` when not set yet.
    public var exitStatus: String
    public var counts: Counts
    /// Items per outcome; every known outcome is present (0 when none); `pending` only when some items are.
    public var byOutcome: [String: Int]
    /// Done items per new subscription state; every known state is present.
    public var byNewState: [String: Int]
    public var byProduct: [GroupCounts]
    public var bySubscriptionGroup: [GroupCounts]
    public var transactions: TransactionCounts
    public var retryFunnel: RetryFunnel
    public var apple: AppleRequestStats
    public var money: MoneySummary
    /// App Store Server Notifications read in the run; nil only when decoded from a file written before
    /// the key existed.
    public var notifications: ReportNotifications?
    /// Why the items were selected, and the sweep apart; nil only when decoded from a file written before the
    /// key existed.
    public var selection: SelectionSummary?
    /// The period the money and transaction counts cover (docs/reports.md, "The period"); nil for a run built
    /// in memory without one, or a file written before the key existed.
    public var period: ReportPeriod?
    /// Items per app (the row's bundle id), with the requests made for them (docs/reports.md, "Several apps");
    /// nil only when decoded from a file written before the key existed.
    public var byApp: [AppCounts]?
    /// Churn by expiration reason, the offer mix with conversions, and price-increase consent (docs/reports.md,
    /// "Churn, offers and price increases"); nil only when decoded from a file written before the key existed.
    public var churnAndOffers: ChurnAndOffers?
    /// When the retention pruned the run's items (`ItemRetention`): a report made after it counts only the items
    /// kept. Nil for every run whose items are whole.
    public var itemsPrunedAt: String?

    /// Item and run counts.
    public struct Counts: Sendable, Equatable, Codable {
        /// `reconciliation_runs.due_count`.
        public var due: Int
        /// Items (subscriptions) the run selected.
        public var selected: Int
        /// Items with status `done`.
        public var done: Int
        /// Items still `pending` (an interrupted or failed run).
        public var pending: Int
        /// Done items Apple answered definitively (outcome not `unresolved`).
        public var verified: Int
        /// Items with outcome `unresolved`.
        public var unresolved: Int
        /// Rows of changes.csv.
        public var changed: Int
        /// Rows of errors.csv (`unresolved` + `rejected` + `conflict`).
        public var errors: Int
        /// Done items whose expiry Apple's answer moved earlier than the stored one (refund, upgrade, or a
        /// date the app stored wrongly): the rows of report.html's "Expiry moved backwards" section and of
        /// changes.csv with `expiry_moved_backwards` true.
        public var expiryMovedBackwards: Int
        /// Subscriptions the nightly scan left out because their last verification was a rejection and their
        /// next check (`subscription_checks.next_check_at`) is later than the run's as-of: counted when the scan
        /// completed (`reconciliation_runs.not_due_rejected_count`). nil: not a nightly run, or its scan did
        /// not complete.
        public var notDueRejected: Int? = nil
        /// The earliest next check among them (RFC 3339), nil when none.
        public var notDueRejectedNextCheck: String? = nil

        enum CodingKeys: String, CodingKey {
            case due, selected, done, pending, verified, unresolved, changed, errors
            case expiryMovedBackwards = "expiry_moved_backwards"
            case notDueRejected = "not_due_rejected"
            case notDueRejectedNextCheck = "not_due_rejected_next_check"
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(due, forKey: .due)
            try c.encode(selected, forKey: .selected)
            try c.encode(done, forKey: .done)
            try c.encode(pending, forKey: .pending)
            try c.encode(verified, forKey: .verified)
            try c.encode(unresolved, forKey: .unresolved)
            try c.encode(changed, forKey: .changed)
            try c.encode(errors, forKey: .errors)
            try c.encode(expiryMovedBackwards, forKey: .expiryMovedBackwards)
            try c.encode(notDueRejected, forKey: .notDueRejected)
            try c.encode(notDueRejectedNextCheck, forKey: .notDueRejectedNextCheck)
        }
    }

    /// Counts of one product or subscription group.
    public struct GroupCounts: Sendable, Equatable, Codable {
        public var id: String
        public var selected: Int
        public var byOutcome: [String: Int]
        public var byNewState: [String: Int]

        enum CodingKeys: String, CodingKey {
            case id, selected
            case byOutcome = "by_outcome"
            case byNewState = "by_new_state"
        }
    }

    /// Ledger transactions of the run (transactions.csv).
    public struct TransactionCounts: Sendable, Equatable, Codable {
        /// Rows of transactions.csv.
        public var total: Int
        /// Transactions purchased in the run's period, per kind (every known kind present). The key keeps its
        /// old name; it counted first-seen transactions before periods existed (docs/reports.md, "The period").
        public var firstSeenByKind: [String: Int]
        /// Transactions refunded/revoked in the run's period, but for family revocations.
        public var refundsSeen: Int
        /// Family members' transactions revoked in the run's period because the purchaser stopped sharing
        /// (`FAMILY_REVOKE`): not refunds (nil in files written before the key existed).
        public var familyRevocationsSeen: Int? = nil
        public var trialsStarted: Int
        public var introOffersStarted: Int
        /// Paid renewals right after a free trial.
        public var trialConversions: Int
        /// Full-price renewals right after an introductory offer.
        public var introOfferConversions: Int
        /// Items that lapsed while on a free trial.
        public var trialsLapsed: Int
        /// Items that lapsed while on an introductory offer.
        public var introOffersLapsed: Int
        /// Transactions first seen by this run but purchased before its period, per kind: history found, never
        /// the period's (nil in files written before the key existed).
        public var historyFoundByKind: [String: Int]? = nil
        /// Refunds first seen by this run but dated before its period.
        public var refundsHistoryFound: Int? = nil

        enum CodingKeys: String, CodingKey {
            case historyFoundByKind = "history_found_by_kind"
            case refundsHistoryFound = "refunds_history_found"
            case total
            case firstSeenByKind = "first_seen_by_kind"
            case refundsSeen = "refunds_seen"
            case familyRevocationsSeen = "family_revocations_seen"
            case trialsStarted = "trials_started"
            case introOffersStarted = "intro_offers_started"
            case trialConversions = "trial_conversions"
            case introOfferConversions = "intro_offer_conversions"
            case trialsLapsed = "trials_lapsed"
            case introOffersLapsed = "intro_offers_lapsed"
        }
    }

    /// Where subscriptions in Apple's billing retry or grace period went in this run.
    public struct RetryFunnel: Sendable, Equatable, Codable {
        /// Decided items (done, not unresolved/rejected/conflict) that were in `grace_period` or `billing_retry` before the run.
        public var inRetryOrGraceBefore: Int
        /// ... of which are `active` again.
        public var recovered: Int
        /// ... of which are still in `grace_period`.
        public var stillInGracePeriod: Int
        /// ... of which are still in `billing_retry`.
        public var stillInBillingRetry: Int
        /// ... of which are now `expired`.
        public var expired: Int
        /// ... of which are now `revoked`.
        public var revoked: Int
        /// Items that entered `grace_period` in this run (from any other state).
        public var enteredGracePeriod: Int
        /// Items that entered `billing_retry` in this run (from neither retry nor grace).
        public var enteredBillingRetry: Int

        enum CodingKeys: String, CodingKey {
            case inRetryOrGraceBefore = "in_retry_or_grace_before"
            case recovered
            case stillInGracePeriod = "still_in_grace_period"
            case stillInBillingRetry = "still_in_billing_retry"
            case expired, revoked
            case enteredGracePeriod = "entered_grace_period"
            case enteredBillingRetry = "entered_billing_retry"
        }
    }

    enum CodingKeys: String, CodingKey {
        case schemaVersion = "schema_version"
        case runId = "run_id"
        case mode, status
        case dryRun = "dry_run"
        case asOf = "as_of"
        case startedAt = "started_at"
        case finishedAt = "finished_at"
        case durationSeconds = "duration_seconds"
        case itemsPrunedAt = "items_pruned_at"
        case exitCode = "exit_code"
        case exitStatus = "exit_status"
        case counts
        case byOutcome = "by_outcome"
        case byNewState = "by_new_state"
        case byProduct = "by_product"
        case bySubscriptionGroup = "by_subscription_group"
        case transactions
        case retryFunnel = "retry_funnel"
        case apple, money, notifications, selection, period
        case byApp = "by_app"
        case churnAndOffers = "churn_and_offers"
    }

    /// Computes the summary of `data` (the in-memory path; the same fold as the streaming generator).
    public init(data: ReportData) {
        var accumulator = RunSummaryAccumulator(moneyOptions: data.moneyOptions, prices: data.prices)
        for item in data.items { accumulator.add(item) }
        for transaction in data.transactions { accumulator.add(transaction) }
        self.init(run: data.run, accumulator: accumulator, prices: data.prices, notifications: data.notifications)
    }

    /// The summary of `run` from its items and transactions folded into `accumulator`, priced with the catalog
    /// `prices` (and the ledger's own prices), with the `notifications` the run read.
    public init(
        run: ReportRun,
        accumulator a: RunSummaryAccumulator,
        prices: [ProductPrice],
        notifications: ReportNotifications = ReportNotifications()
    ) {
        schemaVersion = Self.currentSchemaVersion
        runId = run.id
        mode = run.mode
        status = run.status
        dryRun = run.dryRun
        asOf = RFC3339.string(run.asOf)
        startedAt = RFC3339.string(run.startedAt)
        finishedAt = run.finishedAt.map { RFC3339.string($0) }
        durationSeconds = run.durationSeconds
        itemsPrunedAt = run.itemsPrunedAt.map { RFC3339.string($0) }
        exitCode = run.exitCode
        exitStatus = Self.exitStatusName(run.exitCode)
        counts = a.counts
        counts.due = run.dueCount
        counts.pending = a.counts.selected - a.counts.done
        counts.notDueRejected = run.notDueRejected
        counts.notDueRejectedNextCheck = run.notDueRejectedNext.map { RFC3339.string($0) }
        byOutcome = a.byOutcome
        byNewState = a.byNewState
        byProduct = RunSummaryAccumulator.groupCounts(a.byProduct)
        bySubscriptionGroup = RunSummaryAccumulator.groupCounts(a.byGroup)
        transactions = a.transactions
        transactions.historyFoundByKind = a.historyFoundByKind
        transactions.refundsHistoryFound = a.refundsHistoryFound
        retryFunnel = a.funnel
        apple = run.appleStats
        money = a.money(prices: prices)
        period = run.period
        byApp = a.appCounts
        self.notifications = notifications
        selection = a.selection(of: run)
        churnAndOffers = a.churnAndOffers
    }

    /// Writes every key, `null` included, so the schema is the same for finished and unfinished runs.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(schemaVersion, forKey: .schemaVersion)
        try container.encode(runId, forKey: .runId)
        try container.encode(mode, forKey: .mode)
        try container.encode(status, forKey: .status)
        try container.encode(dryRun, forKey: .dryRun)
        try container.encode(asOf, forKey: .asOf)
        try container.encode(startedAt, forKey: .startedAt)
        try container.encode(finishedAt, forKey: .finishedAt)
        try container.encode(durationSeconds, forKey: .durationSeconds)
        try container.encode(itemsPrunedAt, forKey: .itemsPrunedAt)
        try container.encode(exitCode, forKey: .exitCode)
        try container.encode(exitStatus, forKey: .exitStatus)
        try container.encode(counts, forKey: .counts)
        try container.encode(byOutcome, forKey: .byOutcome)
        try container.encode(byNewState, forKey: .byNewState)
        try container.encode(byProduct, forKey: .byProduct)
        try container.encode(bySubscriptionGroup, forKey: .bySubscriptionGroup)
        try container.encode(transactions, forKey: .transactions)
        try container.encode(retryFunnel, forKey: .retryFunnel)
        try container.encode(apple, forKey: .apple)
        try container.encode(money, forKey: .money)
        try container.encode(notifications, forKey: .notifications)
        try container.encode(selection, forKey: .selection)
        try container.encode(period, forKey: .period)
        try container.encode(byApp, forKey: .byApp)
        try container.encode(churnAndOffers, forKey: .churnAndOffers)
    }

    /// "money per currency" lines for a terminal (the demo prints them): the ledger's real money per
    /// currency, then the catalog estimates, each labelled with its source; one line saying so when none.
    public func moneyLines() -> [String] {
        var lines = money.byCurrency.lines()
        if let converted = money.converted { lines.append(converted.line()) }
        lines += money.historyFound.lines().map { "history found (dated before the period): \($0)" }
        lines += money.catalog.lines()
        for line in money.catalogUnpriced {
            lines.append(
                "unpriced (\(line.explanation)): \(line.productId), \(line.purchases) purchases, "
                    + "\(line.refunds) refunds  [\(MoneySummary.catalogSource)]"
            )
        }
        if lines.isEmpty { return ["money per currency: none (no priced transaction in this run)"] }
        let heading = period.map { "money per currency, period \($0.start) to \($0.end):" } ?? "money per currency:"
        return [heading] + lines.map { "  \($0)" }
    }

    /// The pretty-printed, key-sorted JSON of summary.json (UTF-8, trailing newline).
    public func jsonData() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        var data = try encoder.encode(self)
        data.append(0x0A)
        return data
    }

    /// `success`, `failure`, `unresolved_above_threshold`, `usage`, `apple_unavailable`, `locked`,
    /// `configuration`, or `unknown`.
    static func exitStatusName(_ code: Int?) -> String {
        guard let code, let raw = Int32(exactly: code), let exit = ReconcilerExitCode(rawValue: raw) else {
            return code == nil ? "unknown" : "exit_\(code ?? 0)"
        }
        switch exit {
        case .success: return "success"
        case .failure: return "failure"
        case .unresolvedAboveThreshold: return "unresolved_above_threshold"
        case .usage: return "usage"
        case .appleUnavailable: return "apple_unavailable"
        case .locked: return "locked"
        case .configuration: return "configuration"
        }
    }
}

extension RunSummary.Counts {
    /// Reads `expiry_moved_backwards` as 0 and the `not_due_rejected` keys as null when absent (summary.json
    /// files written before they existed).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            due: try c.decode(Int.self, forKey: .due),
            selected: try c.decode(Int.self, forKey: .selected),
            done: try c.decode(Int.self, forKey: .done),
            pending: try c.decode(Int.self, forKey: .pending),
            verified: try c.decode(Int.self, forKey: .verified),
            unresolved: try c.decode(Int.self, forKey: .unresolved),
            changed: try c.decode(Int.self, forKey: .changed),
            errors: try c.decode(Int.self, forKey: .errors),
            expiryMovedBackwards: try c.decodeIfPresent(Int.self, forKey: .expiryMovedBackwards) ?? 0,
            notDueRejected: try c.decodeIfPresent(Int.self, forKey: .notDueRejected),
            notDueRejectedNextCheck: try c.decodeIfPresent(String.self, forKey: .notDueRejectedNextCheck)
        )
    }
}
