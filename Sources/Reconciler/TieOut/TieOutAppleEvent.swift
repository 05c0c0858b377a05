import AppleReports

/// One unit of a Subscriber report row (`apple_subscriber_events`): a purchase or renewal, or a refund, on a Pacific
/// day (docs/tie-out.md, "What is compared"). A row of several units is several events.
public struct TieOutAppleEvent: Sendable, Equatable {
    public var fileName: String
    public var line: Int
    public var day: PacificDay
    public var subscriptionAppleId: String
    /// The product id the Apple ID maps to (`ProductAppleIds`); nil: none known.
    public var productId: String?
    /// ISO 3166-1 alpha-2.
    public var country: String
    public var currency: String
    /// Customer price in milliunits, negative for a refund.
    public var amount: Int64
    /// Developer proceeds in milliunits of `proceedsCurrency`, negative for a refund.
    public var proceeds: Int64
    public var proceedsCurrency: String
    /// Proceeds Reason says `Rate After One Year` (the 85% rate).
    public var afterOneYear: Bool
    public var isRefund: Bool
    /// Purchase Date of a refund: the refunded purchase's Pacific day.
    public var purchaseDay: PacificDay?
    public var subscriberId: String?

    public init(
        fileName: String,
        line: Int,
        day: PacificDay,
        subscriptionAppleId: String,
        productId: String?,
        country: String,
        currency: String,
        amount: Int64,
        proceeds: Int64,
        proceedsCurrency: String? = nil,
        afterOneYear: Bool = false,
        isRefund: Bool? = nil,
        purchaseDay: PacificDay? = nil,
        subscriberId: String? = nil
    ) {
        self.fileName = fileName
        self.line = line
        self.day = day
        self.subscriptionAppleId = subscriptionAppleId
        self.productId = productId
        self.country = country
        self.currency = currency
        self.amount = amount
        self.proceeds = proceeds
        self.proceedsCurrency = proceedsCurrency ?? currency
        self.afterOneYear = afterOneYear
        self.isRefund = isRefund ?? (amount < 0)
        self.purchaseDay = purchaseDay
        self.subscriberId = subscriberId
    }

    /// The product the comparison files it under: its product id, or `apple_id:<Subscription Apple ID>` when the
    /// Apple ID maps to no product (docs/tie-out.md, "Products: the Apple ID map").
    public var productKey: String { productId ?? Self.unmappedPrefix + subscriptionAppleId }

    public static let unmappedPrefix = "apple_id:"

    public var units: Int { isRefund ? -1 : 1 }

    /// `file:line`.
    public var source: String { "\(fileName):\(line)" }
}
