/// What kind of subscription history a receipt family has; the name goes into `truth.jsonl`.
///
/// Weights are parts per 180 and give the population its proportions: mostly ordinary renewals,
/// a tail of every case the reconciler must get right.
public enum Scenario: String, Sendable, CaseIterable {
    case activeNotRenewed = "active_not_renewed"
    case silentRenewal = "silent_renewal"
    case autoRenewOffExpired = "auto_renew_off_expired"
    case expiredLongAgo = "expired_long_ago"
    case billingRetry = "billing_retry"
    case gracePeriod = "grace_period"
    case refundedOther = "refunded_reason_0"
    case refundedAppIssue = "refunded_reason_1"
    case olderPeriodRefunded = "older_period_refunded"
    case upgraded = "upgraded"
    case pendingDowngrade = "pending_downgrade"
    case pendingCrossgrade = "pending_crossgrade"
    case freeTrial = "free_trial"
    case introOffer = "intro_offer"
    case familyShared = "family_shared"
    case sandbox = "sandbox"
    case multiGroup = "multi_group"
    case foreignApp = "foreign_app"
    case unauthenticatable = "unauthenticatable"
    case deletedAccount = "deleted_account"
    case malformedReceipt = "malformed_receipt"
    case longHistory = "long_history"

    public var weight: Int {
        switch self {
        case .activeNotRenewed: return 24
        case .silentRenewal: return 44
        case .autoRenewOffExpired: return 14
        case .expiredLongAgo: return 8
        case .billingRetry: return 10
        case .gracePeriod: return 8
        case .refundedOther: return 4
        case .refundedAppIssue: return 4
        case .olderPeriodRefunded: return 5
        case .upgraded: return 7
        case .pendingDowngrade: return 5
        case .pendingCrossgrade: return 4
        case .freeTrial: return 7
        case .introOffer: return 6
        case .familyShared: return 6
        case .sandbox: return 8
        case .multiGroup: return 6
        case .foreignApp: return 2
        case .unauthenticatable: return 2
        case .deletedAccount: return 2
        case .malformedReceipt: return 1
        case .longHistory: return 3
        }
    }
}
