import Foundation

/// What Apple said about one subscription, whichever API said it: the decision engine's one input
/// (`DecisionEngine.decide(stored:evidence:now:bundleId:)`, docs/decision-rules.md). verifyReceipt's answer maps to
/// it (`init(verifyReceipt:)`, its transactions and `pending_renewal_info`); the App Store Server API's verified
/// signed data maps to it (the ledger, the history read and the status's latest transaction; the renewal info;
/// Apple's `status`). Nothing of one source's shape is faked for the other.
public struct SubscriptionEvidence: Sendable, Equatable {
    /// Apple's status of the latest transaction (App Store Server API, Get All Subscription Statuses): 1 active,
    /// 2 expired, 3 billing retry, 4 grace period, 5 revoked. Nil when the source has none (verifyReceipt: its
    /// `status` says whether the receipt was read, not the subscription's state).
    public var status: Int?
    public var environment: AppleEnvironment?
    /// The bundle id the answer is for (the receipt's, or the one every signed payload was verified against);
    /// nil when the answer names none.
    public var bundleId: String?
    public var transactions: [ReceiptTransaction]
    /// Renewal info, matched to the subscription by `original_transaction_id`, never by position.
    public var renewalInfo: [PendingRenewalInfo]
    /// verifyReceipt's `latest_receipt`, stored as the row's newest receipt.
    public var latestReceipt: String?
    /// The JWS texts stored beside the row's receipt (App Store Server API).
    public var signedTransactionInfo: String?
    public var signedRenewalInfo: String?

    public init(
        status: Int?,
        environment: AppleEnvironment?,
        bundleId: String?,
        transactions: [ReceiptTransaction],
        renewalInfo: [PendingRenewalInfo],
        latestReceipt: String? = nil,
        signedTransactionInfo: String? = nil,
        signedRenewalInfo: String? = nil
    ) {
        self.status = status
        self.environment = environment
        self.bundleId = bundleId
        self.transactions = transactions
        self.renewalInfo = renewalInfo
        self.latestReceipt = latestReceipt
        self.signedTransactionInfo = signedTransactionInfo
        self.signedRenewalInfo = signedRenewalInfo
    }

    /// A status-0 (or 21006) verifyReceipt answer: `latest_receipt_info` (or `receipt.in_app`), the receipt's
    /// bundle id, `pending_renewal_info`, `latest_receipt`.
    public init(verifyReceipt response: VerifyReceiptResponse) {
        self.init(
            status: nil,
            environment: response.environment,
            bundleId: response.receipt?.bundleId,
            transactions: response.subscriptionTransactions,
            renewalInfo: response.pendingRenewalInfo,
            latestReceipt: response.latestReceipt
        )
    }

    /// The state Apple's status names, nil for a status this project does not know.
    public static func state(ofStatus status: Int) -> SubscriptionState? {
        switch status {
        case 1: .active
        case 2: .expired
        case 3: .billingRetry
        case 4: .gracePeriod
        case 5: .revoked
        default: nil
        }
    }
}
