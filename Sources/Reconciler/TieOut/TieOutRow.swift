/// One line of the tie-out: a key (view, day or fiscal month, product, country, currency, measure) and one cause,
/// with both sides' units and money and the difference attributed to the cause (docs/tie-out.md, "Reading the
/// files").
///
/// The amounts of an event pair whose difference is split between causes sit on its first row; the rows after it
/// carry only their part of the difference. So per view, measure and currency the rows' ledger amounts add up to
/// the ledger's total, Apple's to Apple's, and the differences to the ledger's total less Apple's.
public struct TieOutRow: Sendable, Equatable {
    public enum View: String, Sendable, Codable, Comparable {
        /// Per Pacific day: the ledger against the Subscriber report.
        case daily
        /// Per fiscal month: the ledger's estimated proceeds against the Financial report's partner share.
        case monthly

        public static func < (lhs: View, rhs: View) -> Bool { lhs == .daily && rhs == .monthly }
    }

    public enum Measure: String, Sendable, Codable, Comparable {
        case customerPrice = "customer_price"
        case proceeds
        case partnerShare = "partner_share"

        public static func < (lhs: Measure, rhs: Measure) -> Bool { lhs.order < rhs.order }

        var order: Int {
            switch self {
            case .customerPrice: 0
            case .proceeds: 1
            case .partnerShare: 2
            }
        }
    }

    public struct Key: Sendable, Hashable, Comparable {
        public var view: View
        /// `YYYY-MM-DD` (a Pacific day) or `YYYY-MM` (a fiscal month, as App Store Connect names it).
        public var period: String
        public var productId: String
        public var country: String
        public var currency: String
        public var measure: Measure
        public var cause: TieOutCause
        /// Apple's currency for this row: the customer's, or the proceeds' or partner share's when Apple paid in
        /// another (`exchange_rate`).
        public var appleCurrency: String

        public static func < (lhs: Key, rhs: Key) -> Bool {
            (lhs.view, lhs.period, lhs.productId, lhs.country, lhs.currency)
                < (rhs.view, rhs.period, rhs.productId, rhs.country, rhs.currency)
                || (lhs.view, lhs.period, lhs.productId, lhs.country, lhs.currency)
                    == (rhs.view, rhs.period, rhs.productId, rhs.country, rhs.currency)
                    && (lhs.measure, lhs.cause, lhs.appleCurrency) < (rhs.measure, rhs.cause, rhs.appleCurrency)
        }
    }

    public var key: Key
    public var ledgerUnits = 0
    public var ledgerAmount: Int64 = 0
    public var appleUnits = 0
    public var appleAmount: Int64 = 0
    /// The difference attributed to the cause, in `key.currency`; nil when Apple's side is in another currency.
    public var difference: Int64?
    /// Events behind the row.
    public var events = 0
    /// The first few events' explanations (`detailLimit`).
    public var details: [String] = []

    static let detailLimit = 3

    public init(key: Key) {
        self.key = key
        difference = key.appleCurrency == key.currency ? 0 : nil
    }

    /// The details, and how many more events the row holds.
    public var detail: String {
        let more = events - details.count
        return details.joined(separator: "; ") + (more > 0 ? "; and \(more) more" : "")
    }
}
