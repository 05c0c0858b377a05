/// The period's ledger money converted into one reporting currency with the rates the user supplied
/// (`--fx-rates FILE`; docs/reports.md, "Converted totals"): each currency's gross, refunded and estimated
/// proceeds converted and rounded on their own, then added up. The only place amounts of different currencies
/// are added, and only after conversion, labelled as converted with the user's rates. The object
/// `money.converted` of summary.json (null without `--fx-rates`).
public struct ConvertedMoney: Sendable, Equatable, Codable {
    /// Written as `source` beside the converted figures.
    public static let source =
        "converted with the user's exchange rates (--fx-rates), not Apple's: App Store Connect's financial report "
        + "converts with its own"

    /// One currency's figures, converted.
    public struct Line: Sendable, Equatable, Codable {
        public var currency: String
        /// The rate used, as a decimal string (units of the reporting currency per unit).
        public var rate: String
        public var figures: Figures
    }

    /// Converted amounts, in milliunits of the reporting currency.
    public struct Figures: Sendable, Equatable, Codable {
        public var grossMilliunits: Int64 = 0
        public var refundedMilliunits: Int64 = 0
        public var proceedsMilliunits: Int64 = 0
        public var proceedsRefundedMilliunits: Int64 = 0
        public var netMilliunits: Int64 { grossMilliunits - refundedMilliunits }
        public var netProceedsMilliunits: Int64 { proceedsMilliunits - proceedsRefundedMilliunits }

        mutating func add(_ other: Figures) {
            grossMilliunits += other.grossMilliunits
            refundedMilliunits += other.refundedMilliunits
            proceedsMilliunits += other.proceedsMilliunits
            proceedsRefundedMilliunits += other.proceedsRefundedMilliunits
        }

        enum CodingKeys: String, CodingKey {
            case grossMilliunits = "gross_milliunits"
            case refundedMilliunits = "refunded_milliunits"
            case proceedsMilliunits = "proceeds_milliunits"
            case proceedsRefundedMilliunits = "proceeds_refunded_milliunits"
        }
    }

    public var reportingCurrency: String
    /// The rates file, as given on the command line.
    public var ratesFile: String
    /// Per currency of the period's money that has a rate, sorted by code.
    public var currencies: [Line]
    /// The sum of `currencies`.
    public var totals: Figures
    /// Currencies of the period's money without a rate in the file: not in `totals`, which is then incomplete.
    public var currenciesWithoutRate: [String]

    /// Converts `money` (the period's ledger money) with `rates`.
    public init(_ money: MoneyByCurrency, rates: FXRates) {
        reportingCurrency = rates.reportingCurrency
        ratesFile = rates.file
        currencies = []
        totals = Figures()
        currenciesWithoutRate = []
        for code in money.codes {
            guard let t = money.currencies[code]?.totals, let rate = rates.rates[code] else {
                currenciesWithoutRate.append(code)
                continue
            }
            func convert(_ amount: Int64) -> Int64 { rates.convert(milliunits: amount, from: code) ?? 0 }
            let figures = Figures(
                grossMilliunits: convert(t.grossMilliunits),
                refundedMilliunits: convert(t.refundedMilliunits),
                proceedsMilliunits: convert(t.proceedsMilliunits),
                proceedsRefundedMilliunits: convert(t.refundedProceedsMilliunits)
            )
            currencies.append(Line(currency: code, rate: "\(rate)", figures: figures))
            totals.add(figures)
        }
    }

    /// The totals include every currency of the period's money.
    public var isComplete: Bool { currenciesWithoutRate.isEmpty }

    /// One line for a terminal (the demo): `EUR (converted with your rates: USD, JPY)  gross 120.00  refunded
    /// 10.00  net 110.00  est. net proceeds 77.00`.
    public func line() -> String {
        "\(reportingCurrency) (converted with your rates: \(currencies.map(\.currency).joined(separator: ", ")))  "
            + "gross \(format(totals.grossMilliunits))  refunded \(format(totals.refundedMilliunits))  "
            + "net \(format(totals.netMilliunits))  est. net proceeds \(format(totals.netProceedsMilliunits))"
            + (isComplete ? "" : "  (incomplete: no rate for \(currenciesWithoutRate.joined(separator: ", ")))")
    }

    /// `milliunits` of the reporting currency as a decimal string.
    public func format(_ milliunits: Int64) -> String {
        CurrencyFormat.format(milliunits: milliunits, currency: reportingCurrency)
    }

    // MARK: Coding (every amount as a decimal string and as milliunits, like the ledger figures)

    enum CodingKeys: String, CodingKey {
        case source
        case reportingCurrency = "reporting_currency"
        case ratesFile = "rates_file"
        case complete
        case currenciesWithoutRate = "currencies_without_rate"
        case currencies, currency, rate
        case gross, refunded, net, proceeds
        case proceedsRefunded = "proceeds_refunded"
        case netProceeds = "net_proceeds"
        case grossMilliunits = "gross_milliunits"
        case refundedMilliunits = "refunded_milliunits"
        case netMilliunits = "net_milliunits"
        case proceedsMilliunits = "proceeds_milliunits"
        case proceedsRefundedMilliunits = "proceeds_refunded_milliunits"
        case netProceedsMilliunits = "net_proceeds_milliunits"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        reportingCurrency = try c.decode(String.self, forKey: .reportingCurrency)
        ratesFile = try c.decode(String.self, forKey: .ratesFile)
        currenciesWithoutRate = try c.decode([String].self, forKey: .currenciesWithoutRate)
        totals = try Self.figures(c)
        currencies = []
        var list = try c.nestedUnkeyedContainer(forKey: .currencies)
        while !list.isAtEnd {
            let l = try list.nestedContainer(keyedBy: CodingKeys.self)
            currencies.append(
                Line(
                    currency: try l.decode(String.self, forKey: .currency),
                    rate: try l.decode(String.self, forKey: .rate),
                    figures: try Self.figures(l)
                )
            )
        }
    }

    static func figures(_ c: KeyedDecodingContainer<CodingKeys>) throws -> Figures {
        Figures(
            grossMilliunits: try c.decode(Int64.self, forKey: .grossMilliunits),
            refundedMilliunits: try c.decode(Int64.self, forKey: .refundedMilliunits),
            proceedsMilliunits: try c.decode(Int64.self, forKey: .proceedsMilliunits),
            proceedsRefundedMilliunits: try c.decode(Int64.self, forKey: .proceedsRefundedMilliunits)
        )
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(Self.source, forKey: .source)
        try c.encode(reportingCurrency, forKey: .reportingCurrency)
        try c.encode(ratesFile, forKey: .ratesFile)
        try c.encode(isComplete, forKey: .complete)
        try c.encode(currenciesWithoutRate, forKey: .currenciesWithoutRate)
        try encode(totals, into: &c)
        var list = c.nestedUnkeyedContainer(forKey: .currencies)
        for line in currencies {
            var l = list.nestedContainer(keyedBy: CodingKeys.self)
            try l.encode(line.currency, forKey: .currency)
            try l.encode(line.rate, forKey: .rate)
            try encode(line.figures, into: &l)
        }
    }

    /// Each figure with its keys in summary.json (the amount as text, and in milliunits), in the order written.
    static var figureKeys: [(value: KeyPath<Figures, Int64>, text: CodingKeys, milliunits: CodingKeys)] {
        [
            (\.grossMilliunits, .gross, .grossMilliunits),
            (\.refundedMilliunits, .refunded, .refundedMilliunits),
            (\.netMilliunits, .net, .netMilliunits),
            (\.proceedsMilliunits, .proceeds, .proceedsMilliunits),
            (\.proceedsRefundedMilliunits, .proceedsRefunded, .proceedsRefundedMilliunits),
            (\.netProceedsMilliunits, .netProceeds, .netProceedsMilliunits),
        ]
    }

    func encode(_ f: Figures, into c: inout KeyedEncodingContainer<CodingKeys>) throws {
        for figure in Self.figureKeys {
            try c.encode(format(f[keyPath: figure.value]), forKey: figure.text)
            try c.encode(f[keyPath: figure.value], forKey: figure.milliunits)
        }
    }
}
