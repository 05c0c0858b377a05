/// What kind of subscription history a receipt family has; the name goes into `truth.jsonl`.
///
/// Weights are parts per 200 and give the population its proportions: mostly ordinary renewals,
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
    /// Yearly upgraded to plus monthly; the replaced yearly has `is_upgraded` and no cancellation date.
    case upgradeWithoutCancellation = "upgrade_without_cancellation"
    /// A refunded yearly, then a paid monthly in the same group, valid at the anchor.
    case refundThenResubscribe = "refund_then_resubscribe"
    /// The same, and a previous night's run left the row `revoked` (between the refund and the monthly).
    case refundThenResubscribeRevokedRow = "refund_then_resubscribe_revoked_row"
    /// The app stored an expiry later than Apple's (which lapsed): the row's expiry must move back.
    case appStoredLaterExpiry = "app_stored_later_expiry"
    /// 21010 for a row the app stored as active with a future expiry.
    case deletedAccountActive = "deleted_account_active"
    /// Status 0, but the row's latest transaction has `expires_date_ms` 9000000000000000.
    case absurdDate = "absurd_date"
    /// Status 0, but a date of the row's latest transaction is 9223372036854775000 ms.
    case nearInt64Max = "near_int64_max"
    /// Status 0, but a text field of the row's latest transaction holds a NUL character.
    case nulInText = "nul_in_text"
    /// 21004 for this one receipt (as if another app's receipt were sent with our secret).
    case foreignSecretReceipt = "foreign_secret_receipt"
    /// A yearly in its second to fourth month, refunded a few days before the anchor; the previous night's
    /// run saw it active with an expiry months away, so only a notification makes it due.
    case midPeriodRefund = "mid_period_refund"
    /// A yearly in its second to fourth month whose customer turned auto-renew off a few days before the
    /// anchor; as above, only a notification makes it due.
    case midPeriodAutoRenewOff = "mid_period_auto_renew_off"
    /// A refund of the current period that Apple reversed days later (REFUND, then REFUND_REVERSED); the
    /// previous night's run, between the two, left the row revoked: the run must make it active again.
    case refundReversed = "refund_reversed"
    /// A monthly or weekly subscription that lapsed (auto-renew off, expired) weeks before the anchor, then came back
    /// with a win-back offer (`offerType` 4) on a new purchase under the same original id; active at the anchor.
    case winBack = "win_back"
    /// A subscription whose price rose: the customer never consented, so it expired at the first renewal at the new
    /// price, days before the anchor (expirationIntent 3, EXPIRED with subtype PRICE_INCREASE).
    case priceIncreaseLapsed = "price_increase_lapsed"

    /// The scenarios added in 2026 take slots of `silent_renewal` in each deck (`Population.deck`): the other
    /// scenarios keep their families, so adding them moves no other family.
    static let takesSilentRenewalSlots: [Scenario] = [.winBack, .priceIncreaseLapsed]

    /// Only App Store Server Notifications reveal what changed before the next nightly window would.
    public var seenOnlyThroughNotifications: Bool { self == .midPeriodRefund || self == .midPeriodAutoRenewOff }

    public var weight: Int {
        switch self {
        case .activeNotRenewed: return 24
        case .silentRenewal: return 38 - Self.takesSilentRenewalSlots.count
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
        case .upgradeWithoutCancellation: return 4
        case .refundThenResubscribe: return 3
        case .refundThenResubscribeRevokedRow: return 2
        case .appStoredLaterExpiry: return 4
        case .deletedAccountActive: return 2
        case .absurdDate: return 1
        case .nearInt64Max: return 1
        case .nulInText: return 1
        case .foreignSecretReceipt: return 2
        case .midPeriodRefund: return 2
        case .midPeriodAutoRenewOff: return 2
        case .refundReversed: return 2
        case .winBack, .priceIncreaseLapsed: return 1
        }
    }
}
