/// Gross, refunded (full and prorated) and net money of one currency, or of one product in one currency,
/// from ledger prices (`subscription_transactions.price_milliunits`, signed by Apple in the App Store
/// Server API), in milliunits. Encoded in summary.json with each amount both as an exact decimal string
/// (`gross`) and as integer milliunits (`gross_milliunits`); see docs/reports.md ("Money per currency").
public struct LedgerMoneyFigures: Sendable, Equatable, Codable {
    /// ISO 4217 code of every amount here.
    public var currency: String
    /// The product, for a product's line; nil for a currency's totals.
    public var productId: String?
    /// The storefront, for a storefront's line (`LedgerCurrencyMoney.unknownStorefront` when the ledger has
    /// none); nil otherwise.
    public var storefront: String?
    /// Paid transactions (price > 0) purchased in the period (or, for history found, before it).
    public var paidTransactions = 0
    public var grossMilliunits: Int64 = 0
    /// Paid transactions refunded in full in the period (or before it, for history found) (`REFUND_FULL`; also a revocation without a type, or
    /// `REFUND_PRORATED` without a percentage: valued at the full price).
    public var fullRefunds = 0
    public var fullRefundedMilliunits: Int64 = 0
    /// Paid transactions refunded prorated (`REFUND_PRORATED`) in the period (or before it, for history found).
    public var proratedRefunds = 0
    /// Sum of the prorated parts, each rounded to the currency's minor unit (`CurrencyFormat.prorated`).
    public var proratedRefundedMilliunits: Int64 = 0
    /// Estimated proceeds of the gross: each price less the commission of its transaction
    /// (`CommissionPolicy`; docs/reports.md, "Estimated proceeds"). Taxes are not estimated.
    public var proceedsMilliunits: Int64 = 0
    /// Estimated proceeds reversed by the refunds: each refunded amount less the commission of the refunded
    /// transaction.
    public var refundedProceedsMilliunits: Int64 = 0
    /// Paid transactions (purchased, or refunded, here) at the first-year commission rate, and after it.
    public var firstYearTransactions = 0
    public var afterFirstYearTransactions = 0
    /// Of those, the ones whose proceeds Apple's measured rate gave (docs/reports.md, "Calibrated proceeds").
    public var calibratedTransactions = 0

    public init(currency: String, productId: String? = nil, storefront: String? = nil) {
        self.currency = currency
        self.productId = productId
        self.storefront = storefront
    }

    public var refunds: Int { fullRefunds + proratedRefunds }
    public var refundedMilliunits: Int64 { fullRefundedMilliunits + proratedRefundedMilliunits }
    /// Gross minus refunded: negative when the run saw more refunds than new payments.
    public var netMilliunits: Int64 { grossMilliunits - refundedMilliunits }

    public var gross: String { CurrencyFormat.format(milliunits: grossMilliunits, currency: currency) }
    public var refunded: String { CurrencyFormat.format(milliunits: refundedMilliunits, currency: currency) }
    public var refundedFull: String { CurrencyFormat.format(milliunits: fullRefundedMilliunits, currency: currency) }
    public var refundedProrated: String {
        CurrencyFormat.format(milliunits: proratedRefundedMilliunits, currency: currency)
    }
    public var net: String { CurrencyFormat.format(milliunits: netMilliunits, currency: currency) }
    /// Estimated proceeds less the proceeds the refunds reversed.
    public var netProceedsMilliunits: Int64 { proceedsMilliunits - refundedProceedsMilliunits }
    public var proceeds: String { CurrencyFormat.format(milliunits: proceedsMilliunits, currency: currency) }
    public var proceedsRefunded: String {
        CurrencyFormat.format(milliunits: refundedProceedsMilliunits, currency: currency)
    }
    public var netProceeds: String { CurrencyFormat.format(milliunits: netProceedsMilliunits, currency: currency) }

    /// Adds the counts and amounts of `other` (same currency): a currency's totals from its products.
    mutating func add(_ other: LedgerMoneyFigures) {
        paidTransactions += other.paidTransactions
        grossMilliunits += other.grossMilliunits
        fullRefunds += other.fullRefunds
        fullRefundedMilliunits += other.fullRefundedMilliunits
        proratedRefunds += other.proratedRefunds
        proratedRefundedMilliunits += other.proratedRefundedMilliunits
        proceedsMilliunits += other.proceedsMilliunits
        refundedProceedsMilliunits += other.refundedProceedsMilliunits
        firstYearTransactions += other.firstYearTransactions
        afterFirstYearTransactions += other.afterFirstYearTransactions
        calibratedTransactions += other.calibratedTransactions
    }

    /// Counts one ledger transaction of `currency` for `scope` (the caller groups by currency and product): its
    /// price in gross when its purchase counts in `scope`, its refund when its refund does (docs/reports.md,
    /// "The period"). A payment purchased and refunded in the period is in both gross and refunded. Its
    /// estimated proceeds, and those its refund reverses, by `estimate` at its tier.
    mutating func add(_ transaction: ReportTransaction, scope: PeriodScope, estimate: ProceedsEstimate) {
        guard let price = transaction.priceMilliunits, price > 0 else { return }
        let after = CommissionPolicy.isAfterFirstYear(
            purchase: transaction.purchaseDate,
            firstPaid: transaction.firstPaidDate
        )
        let currency = currency
        let proceeds = { (amount: Int64) in
            estimate.proceeds(of: amount, currency: currency, storefront: transaction.storefront, afterFirstYear: after)
        }
        if transaction.purchaseScope == scope || transaction.refundScope == scope {
            if after { afterFirstYearTransactions += 1 } else { firstYearTransactions += 1 }
            if proceeds(price).calibrated { calibratedTransactions += 1 }
        }
        if transaction.purchaseScope == scope {
            paidTransactions += 1
            grossMilliunits += price
            proceedsMilliunits += proceeds(price).milliunits
        }
        guard transaction.refundScope == scope else { return }
        let refunded: Int64
        if transaction.revocationType == "REFUND_PRORATED", let percentage = transaction.revocationPercentage {
            proratedRefunds += 1
            refunded = CurrencyFormat.prorated(priceMilliunits: price, percentage: percentage, currency: currency)
            proratedRefundedMilliunits += refunded
        } else {
            fullRefunds += 1
            refunded = price
            fullRefundedMilliunits += price
        }
        refundedProceedsMilliunits += proceeds(refunded).milliunits
    }

    // MARK: Coding (flat: the currency's object in summary.json holds these keys beside `source` and `products`)

    enum Key: String, CodingKey {
        case currency, source, products
        case productId = "product_id"
        case paidTransactions = "paid_transactions"
        case gross
        case grossMilliunits = "gross_milliunits"
        case fullRefunds = "full_refunds"
        case refundedFull = "refunded_full"
        case refundedFullMilliunits = "refunded_full_milliunits"
        case proratedRefunds = "prorated_refunds"
        case refundedProrated = "refunded_prorated"
        case refundedProratedMilliunits = "refunded_prorated_milliunits"
        case refunds, refunded
        case refundedMilliunits = "refunded_milliunits"
        case net
        case netMilliunits = "net_milliunits"
        case proceeds
        case proceedsMilliunits = "proceeds_milliunits"
        case proceedsRefunded = "proceeds_refunded"
        case proceedsRefundedMilliunits = "proceeds_refunded_milliunits"
        case netProceeds = "net_proceeds"
        case netProceedsMilliunits = "net_proceeds_milliunits"
        case firstYearTransactions = "first_year_transactions"
        case afterFirstYearTransactions = "after_first_year_transactions"
        case calibratedTransactions = "calibrated_transactions"
        case proceedsSource = "proceeds_source"
        case storefronts, storefront
    }

    public init(from decoder: any Decoder) throws {
        try self.init(from: decoder.container(keyedBy: Key.self))
    }

    /// Reads the figures from their keys (the milliunit keys and counts; the strings are derived).
    init(from c: KeyedDecodingContainer<Key>) throws {
        currency = try c.decode(String.self, forKey: .currency)
        productId = try c.decodeIfPresent(String.self, forKey: .productId)
        storefront = try c.decodeIfPresent(String.self, forKey: .storefront)
        paidTransactions = try c.decode(Int.self, forKey: .paidTransactions)
        grossMilliunits = try c.decode(Int64.self, forKey: .grossMilliunits)
        fullRefunds = try c.decode(Int.self, forKey: .fullRefunds)
        fullRefundedMilliunits = try c.decode(Int64.self, forKey: .refundedFullMilliunits)
        proratedRefunds = try c.decode(Int.self, forKey: .proratedRefunds)
        proratedRefundedMilliunits = try c.decode(Int64.self, forKey: .refundedProratedMilliunits)
        // Absent in summary.json files written before estimated proceeds existed.
        proceedsMilliunits = try c.decodeIfPresent(Int64.self, forKey: .proceedsMilliunits) ?? 0
        refundedProceedsMilliunits = try c.decodeIfPresent(Int64.self, forKey: .proceedsRefundedMilliunits) ?? 0
        firstYearTransactions = try c.decodeIfPresent(Int.self, forKey: .firstYearTransactions) ?? 0
        afterFirstYearTransactions = try c.decodeIfPresent(Int.self, forKey: .afterFirstYearTransactions) ?? 0
        calibratedTransactions = try c.decodeIfPresent(Int.self, forKey: .calibratedTransactions) ?? 0
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        try encode(into: &c)
    }

    /// Writes every figure twice: an exact decimal string and integer milliunits.
    func encode(into c: inout KeyedEncodingContainer<Key>) throws {
        try c.encode(currency, forKey: .currency)
        if let storefront { try c.encode(storefront, forKey: .storefront) }
        if let productId { try c.encode(productId, forKey: .productId) }
        try c.encode(paidTransactions, forKey: .paidTransactions)
        try c.encode(gross, forKey: .gross)
        try c.encode(grossMilliunits, forKey: .grossMilliunits)
        try c.encode(fullRefunds, forKey: .fullRefunds)
        try c.encode(refundedFull, forKey: .refundedFull)
        try c.encode(fullRefundedMilliunits, forKey: .refundedFullMilliunits)
        try c.encode(proratedRefunds, forKey: .proratedRefunds)
        try c.encode(refundedProrated, forKey: .refundedProrated)
        try c.encode(proratedRefundedMilliunits, forKey: .refundedProratedMilliunits)
        try c.encode(refunds, forKey: .refunds)
        try c.encode(refunded, forKey: .refunded)
        try c.encode(refundedMilliunits, forKey: .refundedMilliunits)
        try c.encode(net, forKey: .net)
        try c.encode(netMilliunits, forKey: .netMilliunits)
        try c.encode(firstYearTransactions, forKey: .firstYearTransactions)
        try c.encode(afterFirstYearTransactions, forKey: .afterFirstYearTransactions)
        try c.encode(calibratedTransactions, forKey: .calibratedTransactions)
        try c.encode(proceeds, forKey: .proceeds)
        try c.encode(proceedsMilliunits, forKey: .proceedsMilliunits)
        try c.encode(proceedsRefunded, forKey: .proceedsRefunded)
        try c.encode(refundedProceedsMilliunits, forKey: .proceedsRefundedMilliunits)
        try c.encode(netProceeds, forKey: .netProceeds)
        try c.encode(netProceedsMilliunits, forKey: .netProceedsMilliunits)
    }
}
