import Foundation

/// Apple's commission used to estimate proceeds from ledger prices (docs/reports.md, "Estimated proceeds"):
/// by default 30% of a transaction bought in its subscriber's first year of paid service and 15% after it;
/// 15% for everything in the Small Business Program (`--small-business`); or one rate for everything
/// (`--commission-rate`). Rates are milliunits of a percent, like `revocation_percentage` (30000 = 30%).
public struct CommissionPolicy: Sendable, Equatable, Codable {
    /// `standard`, `small_business` or `fixed`.
    public var name: String
    /// Rate of a transaction bought in the subscriber's first year of paid service.
    public var firstYearRate: Int64
    /// Rate of a transaction bought after it.
    public var afterFirstYearRate: Int64

    /// 30% in the first year of paid service, 15% after it.
    public static let standard = CommissionPolicy(name: "standard", firstYearRate: 30000, afterFirstYearRate: 15000)
    /// The Small Business Program: 15% for every transaction.
    public static let smallBusiness = CommissionPolicy(
        name: "small_business",
        firstYearRate: 15000,
        afterFirstYearRate: 15000
    )

    public init(name: String, firstYearRate: Int64, afterFirstYearRate: Int64) {
        self.name = name
        self.firstYearRate = firstYearRate
        self.afterFirstYearRate = afterFirstYearRate
    }

    /// One rate for every transaction (`--commission-rate`).
    public static func fixed(_ rate: Int64) -> CommissionPolicy {
        CommissionPolicy(name: "fixed", firstYearRate: rate, afterFirstYearRate: rate)
    }

    /// A rate the user configured (`--commission-rate`): never replaced by Apple's measured rates.
    public var isConfigured: Bool { name == "fixed" }

    /// Parses a `--commission-rate` value: a percentage from 0 to 100 with at most three decimals (`15`,
    /// `17.5`), as milliunits of a percent. Nil when it is not one.
    public static func parseRate(_ text: String) -> Int64? {
        guard text.range(of: #"^[0-9]{1,3}(\.[0-9]{1,3})?$"#, options: .regularExpression) != nil,
            let value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))
        else { return nil }
        let milli = NSDecimalNumber(decimal: value * 1000).int64Value
        return milli <= 100_000 ? milli : nil
    }

    /// Whether a transaction bought at `purchase` falls after the first year of paid service that began with
    /// the subscription's first paid purchase `firstPaid` (one calendar year later in UTC, or more). Unknown
    /// dates count as the first year (the higher commission: proceeds are never overestimated for lack of a
    /// date).
    public static func isAfterFirstYear(purchase: Date?, firstPaid: Date?) -> Bool {
        guard let purchase, let firstPaid else { return false }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        guard let anniversary = calendar.date(byAdding: .year, value: 1, to: firstPaid) else { return false }
        return purchase >= anniversary
    }

    /// Proceeds of `amount` milliunits of `currency` at `rate`: the amount less the commission, the
    /// commission rounded like a prorated refund (`CurrencyFormat.prorated`: half away from zero to the
    /// currency's minor unit).
    public static func proceeds(of amount: Int64, rate: Int64, currency: String) -> Int64 {
        amount - CurrencyFormat.prorated(priceMilliunits: amount, percentage: rate, currency: currency)
    }

    /// The label written beside every proceeds figure.
    public var label: String {
        switch name {
        case "small_business": "estimate: commission 15% (Small Business Program); taxes not estimated"
        case "fixed": "estimate: commission \(Self.percent(firstYearRate))% (configured); taxes not estimated"
        default: "estimate: commission 30% in a subscriber's first year of paid service, 15% after; taxes not estimated"
        }
    }

    /// A rate in milliunits of a percent as a plain percentage: 30000 -> `30`, 17500 -> `17.5`.
    public static func percent(_ rate: Int64) -> String {
        "\(Decimal(rate) / 1000)"
    }

    enum CodingKeys: String, CodingKey {
        case name
        case firstYearRate = "first_year_rate_percent"
        case afterFirstYearRate = "after_first_year_rate_percent"
        case label
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        firstYearRate = try Self.parseRate(c.decode(String.self, forKey: .firstYearRate)) ?? 30000
        afterFirstYearRate = try Self.parseRate(c.decode(String.self, forKey: .afterFirstYearRate)) ?? 15000
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(Self.percent(firstYearRate), forKey: .firstYearRate)
        try c.encode(Self.percent(afterFirstYearRate), forKey: .afterFirstYearRate)
        try c.encode(label, forKey: .label)
    }
}
