import AppleReports
import Foundation
import Postgres

/// What Apple actually paid per unit of customer price, per country, currency and commission tier, measured from the
/// imported Subscriber reports (docs/reports.md, "Calibrated proceeds"): tax and commission together, so a
/// storefront whose prices include VAT gets its real rate instead of the commission alone.
///
/// A rate is the sum of Apple's developer proceeds over the sum of the customer prices of the sales (no refunds, no
/// free rows, proceeds in the customer's currency) of the `windowDays` days up to the report's as-of. The nightly
/// reports' estimated proceeds use it where the transaction's storefront, currency and tier have one, and say how
/// many they priced this way; elsewhere the commission estimate stays (`CommissionPolicy`).
public struct ProceedsCalibration: Sendable, Equatable, Codable {
    public struct Key: Sendable, Hashable, Comparable {
        /// ISO 3166-1 alpha-2, as Apple's reports write it (`StorefrontCountry`).
        public var country: String
        public var currency: String
        /// Apple's "Rate After One Year" (the 85% tier).
        public var afterFirstYear: Bool

        public init(country: String, currency: String, afterFirstYear: Bool) {
            self.country = country
            self.currency = currency
            self.afterFirstYear = afterFirstYear
        }

        public static func < (a: Key, b: Key) -> Bool {
            (a.country, a.currency, a.afterFirstYear ? 1 : 0) < (b.country, b.currency, b.afterFirstYear ? 1 : 0)
        }
    }

    /// The sums a rate is measured from.
    public struct Rate: Sendable, Equatable {
        public var priceMilliunits: Int64
        public var proceedsMilliunits: Int64
        /// Units of sales measured.
        public var units: Int

        public init(priceMilliunits: Int64, proceedsMilliunits: Int64, units: Int) {
            self.priceMilliunits = priceMilliunits
            self.proceedsMilliunits = proceedsMilliunits
            self.units = units
        }

        /// Proceeds per unit of price, for a reader (`0.5833`).
        public var share: Double { priceMilliunits > 0 ? Double(proceedsMilliunits) / Double(priceMilliunits) : 0 }
    }

    /// Days of Subscriber reports measured, ending on the as-of's day.
    public static let windowDays = 90

    public var rates: [Key: Rate]

    public init(rates: [Key: Rate] = [:]) {
        self.rates = rates
    }

    /// No rate known: every estimate stays the commission's.
    public static let none = ProceedsCalibration()

    public var isEmpty: Bool { rates.isEmpty }

    /// The proceeds of `amount` (milliunits, positive) of `currency` sold in `storefront` (ISO 3166-1 alpha-3, the
    /// ledger's) at the tier `afterFirstYear`: `amount x proceeds / price` of the measured rate, rounded to the
    /// currency's minor unit half away from zero; nil when no rate is known for them.
    public func proceeds(of amount: Int64, currency: String, storefront: String?, afterFirstYear: Bool) -> Int64? {
        let key = Key(
            country: StorefrontCountry.country(ofStorefront: storefront),
            currency: currency,
            afterFirstYear: afterFirstYear
        )
        guard amount >= 0, let rate = rates[key], rate.priceMilliunits > 0, rate.proceedsMilliunits >= 0 else {
            return nil
        }
        let unit = CurrencyFormat.milliunitsPerMinorUnit(currency)
        // amount x proceeds / (price x unit) in 128 bits: a year of a big storefront's proceeds times a yen price
        // passes Int64.
        let product = amount.multipliedFullWidth(by: rate.proceedsMilliunits)
        let divisor = rate.priceMilliunits.multipliedReportingOverflow(by: unit)
        guard !divisor.overflow, product.high < divisor.partialValue else { return nil }
        let (quotient, remainder) = divisor.partialValue.dividingFullWidth(product)
        let rounded = remainder * 2 >= divisor.partialValue ? quotient + 1 : quotient
        return rounded * unit
    }

    /// The rates of the Subscriber reports imported for the `windowDays` Pacific days up to `through` (inclusive);
    /// `.none` when the database has no Apple reports (migration 021 not applied) or none in the window.
    public static func load(_ db: PostgresConnection, through: Date) throws -> ProceedsCalibration {
        let present = try db.queryFirst("SELECT to_regclass('apple_subscriber_events') IS NOT NULL AS present")
        guard try present?.decode("present", as: Bool.self) == true else { return .none }
        let day = PacificDay(of: through).description
        var rates: [Key: Rate] = [:]
        for row in try db.query(sql, [day, Int64(windowDays)]) {
            let key = Key(
                country: try row.decode("country"),
                currency: try row.decode("currency"),
                afterFirstYear: try row.decode("after_first_year")
            )
            rates[key] = Rate(
                priceMilliunits: try row.decode("price"),
                proceedsMilliunits: try row.decode("proceeds"),
                units: Int(try row.decode("units", as: Int64.self))
            )
        }
        return ProceedsCalibration(rates: rates)
    }

    /// Sales of the window per country, currency and tier. A row of `n` units is `n` sales of its price and
    /// proceeds (docs/apple-reports.md). Reads `apple_subscriber_events_day_idx` by day.
    static let sql = """
        SELECT country, customer_currency AS currency,
               COALESCE(proceeds_reason = 'Rate After One Year', false) AS after_first_year,
               sum(customer_price_milliunits * units)::bigint AS price,
               sum(developer_proceeds_milliunits * units)::bigint AS proceeds,
               sum(units)::bigint AS units
          FROM apple_subscriber_events
         WHERE event_date > $1::date - $2::int AND event_date <= $1::date
           AND NOT refund AND units > 0 AND customer_price_milliunits > 0
           AND proceeds_currency = customer_currency
         GROUP BY 1, 2, 3
        """

    // MARK: Coding (summary.json `money.proceeds_calibration`: the window and one object per rate)

    enum CodingKeys: String, CodingKey {
        case windowDays = "window_days"
        case rates
    }

    enum RateKeys: String, CodingKey {
        case country, currency, tier, units
        case proceedsShare = "proceeds_share"
        case priceMilliunits = "price_milliunits"
        case proceedsMilliunits = "proceeds_milliunits"
    }

    /// The tier as summary.json names it.
    static func tier(_ afterFirstYear: Bool) -> String { afterFirstYear ? "after_first_year" : "first_year" }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(Self.windowDays, forKey: .windowDays)
        var list = c.nestedUnkeyedContainer(forKey: .rates)
        for (key, rate) in rates.sorted(by: { $0.key < $1.key }) {
            var r = list.nestedContainer(keyedBy: RateKeys.self)
            try r.encode(key.country, forKey: .country)
            try r.encode(key.currency, forKey: .currency)
            try r.encode(Self.tier(key.afterFirstYear), forKey: .tier)
            try r.encode((rate.share * 10_000).rounded() / 10_000, forKey: .proceedsShare)
            try r.encode(rate.units, forKey: .units)
            try r.encode(rate.priceMilliunits, forKey: .priceMilliunits)
            try r.encode(rate.proceedsMilliunits, forKey: .proceedsMilliunits)
        }
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        var list = try c.nestedUnkeyedContainer(forKey: .rates)
        var rates: [Key: Rate] = [:]
        while !list.isAtEnd {
            let r = try list.nestedContainer(keyedBy: RateKeys.self)
            let key = Key(
                country: try r.decode(String.self, forKey: .country),
                currency: try r.decode(String.self, forKey: .currency),
                afterFirstYear: try r.decode(String.self, forKey: .tier) == Self.tier(true)
            )
            rates[key] = Rate(
                priceMilliunits: try r.decode(Int64.self, forKey: .priceMilliunits),
                proceedsMilliunits: try r.decode(Int64.self, forKey: .proceedsMilliunits),
                units: try r.decode(Int.self, forKey: .units)
            )
        }
        self.rates = rates
    }
}
