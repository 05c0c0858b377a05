import Foundation

/// What the App Store Server API said about one subscription, after every JWS was verified and decoded:
/// the status of its latest transaction (Get All Subscription Statuses), its transactions (the ledger so
/// far, the history read now, the status's latest transaction) and its renewal info.
/// `DecisionEngine.decide(stored:evidence:now:bundleId:)` decides from it.
public struct SignedSubscriptionEvidence: Sendable, Equatable {
    /// Apple's status of the latest transaction: 1 active, 2 expired, 3 billing retry, 4 grace period,
    /// 5 revoked.
    public var status: Int?
    public var environment: AppleEnvironment?
    /// The bundle id the payloads were signed for.
    public var bundleId: String?
    public var transactions: [ReceiptTransaction]
    public var renewalInfo: PendingRenewalInfo?
    /// The JWS texts stored beside the row's receipt.
    public var signedTransactionInfo: String?
    public var signedRenewalInfo: String?

    public init(
        status: Int?,
        environment: AppleEnvironment?,
        bundleId: String?,
        transactions: [ReceiptTransaction],
        renewalInfo: PendingRenewalInfo?,
        signedTransactionInfo: String? = nil,
        signedRenewalInfo: String? = nil
    ) {
        self.status = status
        self.environment = environment
        self.bundleId = bundleId
        self.transactions = transactions
        self.renewalInfo = renewalInfo
        self.signedTransactionInfo = signedTransactionInfo
        self.signedRenewalInfo = signedRenewalInfo
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
