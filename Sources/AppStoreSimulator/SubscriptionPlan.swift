/// One subscription's history as a plan of events on a time line: when it started, what the customer
/// and Apple did and when. Evaluating it at an instant (`timeline(at:)`) gives the transactions that
/// exist by then and the renewal info Apple would report; events after that instant do not exist yet.
public struct SubscriptionPlan: Sendable {
    /// A refund (or revocation) of the transaction with index `transactionIndex`, at `at`.
    public struct Refund: Sendable {
        public var transactionIndex: Int
        public var at: Int64
        /// Apple's `cancellation_reason`: 1 = issue in the app, 0 = other.
        public var reason: Int
        /// Apple reversed the refund at this instant (REFUND_REVERSED): from then on the transaction is
        /// as if never refunded.
        public var reversedAt: Int64? = nil
    }

    /// An immediate change of product within the group (upgrade): the current transaction is marked
    /// `is_upgraded` (and, when `carriesCancellationDate`, cancelled at `at`), a new transaction of `to`
    /// starts then. Real receipts often show `is_upgraded` without a cancellation date.
    public struct Upgrade: Sendable {
        public var at: Int64
        public var to: SimProduct
        public var carriesCancellationDate = true
    }

    /// A new purchase in the same group after the subscription stopped (a refund): the transaction current
    /// at `at` keeps its dates (and its refund), a paid transaction of `to` starts at `at` with the same
    /// original_transaction_id, and renewals continue from it.
    public struct Resubscription: Sendable {
        public var at: Int64
        public var to: SimProduct
    }

    /// A change that takes effect at the next renewal after `decidedAt` (downgrade or crossgrade).
    public struct PlanChange: Sendable {
        public var decidedAt: Int64
        public var to: SimProduct
    }

    /// `original_transaction_id`; later transactions count up from it.
    public var originalTransactionId: UInt64
    /// First `web_order_line_item_id`; one per transaction, counting up.
    public var webOrderLineItemBase: UInt64
    public var product: SimProduct
    public var start: Int64
    public var sandbox: Bool
    /// The first transaction is a free trial of `trialDays` (sandbox: 3 minutes).
    public var trial: Bool = false
    public var trialDays: Int64 = 7
    /// Number of paid transactions (after any trial) in an introductory offer.
    public var introCount: Int = 0
    /// `offer_code_ref_name` on the intro transactions, when the offer came from an offer code.
    public var offerCodeRefName: String?
    public var familyShared: Bool = false
    /// The customer turned auto-renew off at this instant: no renewal on or after it.
    public var autoRenewOffAt: Int64?
    /// The first renewal due on or after this instant fails to bill (billing retry for 60 days).
    public var billingFailsFrom: Int64?
    /// Billing grace period length in days, if the app enabled it (6 for weekly, 16 otherwise).
    public var graceDays: Int64?
    public var upgrade: Upgrade?
    public var resubscription: Resubscription?
    public var planChange: PlanChange?
    public var refunds: [Refund] = []
    /// Sandbox subscriptions renew at most this many times.
    public var maxRenewals: Int?
    public var promotionalOffer: PromotionalOffer?
    public var winBack: WinBack?
    public var extensions: [Extension] = []
    public var priceIncrease: PriceIncrease?
    public var refundRequests: [RefundRequest] = []
    /// A monthly plan billed under a commitment of this many months (API 1.21 `billingPlanType` MONTHLY).
    public var commitmentMonths: Int?

    public init(
        originalTransactionId: UInt64,
        webOrderLineItemBase: UInt64,
        product: SimProduct,
        start: Int64,
        sandbox: Bool
    ) {
        self.originalTransactionId = originalTransactionId
        self.webOrderLineItemBase = webOrderLineItemBase
        self.product = product
        self.start = start
        self.sandbox = sandbox
        if sandbox { maxRenewals = 6 }
    }

    /// How long Apple keeps retrying a failed renewal.
    public static let billingRetryWindow: Int64 = 60 * SimTime.day
}
