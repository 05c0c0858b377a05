/// The count columns of one Subscription report row (docs/apple-reports.md, "Subscription report"): active
/// subscriptions at the end of the day by how the customer pays. nil: the file's header lacks the column (the win-back
/// columns came after version 1_3); a blank field is 0.
public struct SubscriptionCounts: Sendable, Equatable {
    public var activeStandardPrice: Int32?
    public var activeFreeTrialIntroductoryOffer: Int32?
    public var activePayUpFrontIntroductoryOffer: Int32?
    public var activePayAsYouGoIntroductoryOffer: Int32?
    public var freeTrialPromotionalOffer: Int32?
    public var payUpFrontPromotionalOffer: Int32?
    public var payAsYouGoPromotionalOffer: Int32?
    public var freeTrialOfferCode: Int32?
    public var payUpFrontOfferCode: Int32?
    public var payAsYouGoOfferCode: Int32?
    public var marketingOptIns: Int32?
    public var billingRetry: Int32?
    public var gracePeriod: Int32?
    public var subscribers: Int32?
    public var freeTrialWinBack: Int32?
    public var payUpFrontWinBack: Int32?
    public var payAsYouGoWinBack: Int32?

    /// Apple's column names, in Apple's order, with the table column each is stored in.
    public static let columns: [(apple: String, stored: String)] = [
        ("Active Standard Price Subscriptions", "active_standard_price"),
        ("Active Free Trial Introductory Offer Subscriptions", "active_free_trial_introductory_offer"),
        ("Active Pay Up Front Introductory Offer Subscriptions", "active_pay_up_front_introductory_offer"),
        ("Active Pay As You Go Introductory Offer Subscriptions", "active_pay_as_you_go_introductory_offer"),
        ("Free Trial Promotional Offer Subscriptions", "free_trial_promotional_offer"),
        ("Pay Up Front Promotional Offer Subscriptions", "pay_up_front_promotional_offer"),
        ("Pay As You Go Promotional Offer Subscriptions", "pay_as_you_go_promotional_offer"),
        ("Free Trial Offer Code Subscriptions", "free_trial_offer_code"),
        ("Pay Up Front Offer Code Subscriptions", "pay_up_front_offer_code"),
        ("Pay As You Go Offer Code Subscriptions", "pay_as_you_go_offer_code"),
        ("Marketing Opt-Ins", "marketing_opt_ins"),
        ("Billing Retry", "billing_retry"),
        ("Grace Period", "grace_period"),
        ("Subscribers", "subscribers"),
        ("Free Trial Win-Back Offers", "free_trial_win_back"),
        ("Pay Up Front Win-Back Offers", "pay_up_front_win_back"),
        ("Pay As You Go Win-Back Offers", "pay_as_you_go_win_back"),
    ]

    /// The counts in `columns`' order.
    var values: [Int32?] {
        [
            activeStandardPrice, activeFreeTrialIntroductoryOffer, activePayUpFrontIntroductoryOffer,
            activePayAsYouGoIntroductoryOffer, freeTrialPromotionalOffer, payUpFrontPromotionalOffer,
            payAsYouGoPromotionalOffer, freeTrialOfferCode, payUpFrontOfferCode, payAsYouGoOfferCode, marketingOptIns,
            billingRetry, gracePeriod, subscribers, freeTrialWinBack, payUpFrontWinBack, payAsYouGoWinBack,
        ]
    }

    init(_ row: AppleReportRowReader) throws(AppleReportError) {
        var read: [Int32?] = []
        for column in Self.columns { read.append(try row.count(column.apple)) }
        (activeStandardPrice, activeFreeTrialIntroductoryOffer, activePayUpFrontIntroductoryOffer) =
            (read[0], read[1], read[2])
        (activePayAsYouGoIntroductoryOffer, freeTrialPromotionalOffer, payUpFrontPromotionalOffer) =
            (read[3], read[4], read[5])
        (payAsYouGoPromotionalOffer, freeTrialOfferCode, payUpFrontOfferCode, payAsYouGoOfferCode) =
            (read[6], read[7], read[8], read[9])
        (marketingOptIns, billingRetry, gracePeriod, subscribers) = (read[10], read[11], read[12], read[13])
        (freeTrialWinBack, payUpFrontWinBack, payAsYouGoWinBack) = (read[14], read[15], read[16])
    }
}
