import Foundation

/// Minor units of ISO 4217 currencies and the exact formatting of milliunit amounts (the ledger's unit:
/// 9990 = 9.99 USD, 1500000 = 1500 JPY). See docs/reports.md ("Money per currency").
public enum CurrencyFormat {
    /// Currencies whose minor unit is not two decimal places (ISO 4217); every other code has two.
    static let minorUnitDigitsExceptions: [String: Int] = [
        "BIF": 0, "CLP": 0, "DJF": 0, "GNF": 0, "ISK": 0, "JPY": 0, "KMF": 0, "KRW": 0, "PYG": 0, "RWF": 0,
        "UGX": 0, "UYI": 0, "VND": 0, "VUV": 0, "XAF": 0, "XOF": 0, "XPF": 0,
        "BHD": 3, "IQD": 3, "JOD": 3, "KWD": 3, "LYD": 3, "OMR": 3, "TND": 3,
        "CLF": 4, "UYW": 4,
    ]

    /// Decimal places of `currency`'s minor unit: 0 for JPY, 3 for KWD, 2 for USD and unknown codes.
    public static func minorUnitDigits(_ currency: String) -> Int {
        minorUnitDigitsExceptions[currency] ?? 2
    }

    /// Milliunits in one minor unit of `currency` (10 for USD: 1 cent; 1000 for JPY: 1 yen); 1 when the
    /// minor unit is finer than a milliunit.
    public static func milliunitsPerMinorUnit(_ currency: String) -> Int64 {
        var step: Int64 = 1
        for _ in 0..<max(0, 3 - minorUnitDigits(currency)) { step *= 10 }
        return step
    }

    /// `milliunits` as an exact decimal string with the currency's minor-unit places (more only when the
    /// amount has finer digits, never rounded): `9990` USD -> `"9.99"`, `1500000` JPY -> `"1500"`,
    /// `-4500` USD -> `"-4.50"`, `9995` USD -> `"9.995"`.
    public static func format(milliunits: Int64, currency: String) -> String {
        format(Decimal(milliunits) / 1000, currency: currency)
    }

    /// An exact decimal amount with at least the currency's minor-unit places, never rounded away.
    public static func format(_ value: Decimal, currency: String) -> String {
        let digits = minorUnitDigits(currency)
        var text = "\(value)"
        let negative = text.hasPrefix("-")
        if negative { text.removeFirst() }
        let parts = text.split(separator: ".", maxSplits: 1).map(String.init)
        let whole = parts.first.map { $0.isEmpty ? "0" : $0 } ?? "0"
        var fraction = parts.count == 2 ? parts[1] : ""
        if fraction.count < digits { fraction += String(repeating: "0", count: digits - fraction.count) }
        let body = fraction.isEmpty ? whole : "\(whole).\(fraction)"
        let isZero = body.allSatisfy { $0 == "0" || $0 == "." }
        return negative && !isZero ? "-" + body : body
    }

    /// The refunded part of a prorated refund: `price` x `percentage` / 100000 (milliunits of a percent),
    /// rounded half away from zero to the currency's minor unit, in milliunits. 1500000 JPY at 33333 ->
    /// 499995 exactly, rounded to 500000 (500 yen); 9990 USD at 45000 -> 4495.5, rounded to 4500 (4.50).
    public static func prorated(priceMilliunits price: Int64, percentage: Int64, currency: String) -> Int64 {
        rounded(Decimal(price) * Decimal(percentage) / 100000, currency: currency)
    }

    /// An exact amount in milliunits rounded half away from zero to `currency`'s minor unit, in milliunits: the
    /// one rounding rule of every computed amount (prorated refunds, commissions, conversions; docs/reports.md,
    /// "Money per currency").
    public static func rounded(_ exact: Decimal, currency: String) -> Int64 {
        let step = milliunitsPerMinorUnit(currency)
        var steps = exact / Decimal(step)
        var rounded = Decimal()
        NSDecimalRound(&rounded, &steps, 0, .plain)
        return NSDecimalNumber(decimal: rounded).int64Value * step
    }
}
