import AppleReports
import CivilTime
import Foundation

/// tieout.json: the result whole (docs/tie-out.md, "Reading the files"). Every amount is written twice, as in summary.json:
/// an exact decimal in the currency's minor unit and the same amount in integer milliunits (`*_milliunits`).
struct TieOutJSON: Encodable {
    struct Period: Encodable {
        var label: String
        var from: String
        var to: String
        var fiscalMonth: String?
        var fiscalMonthsCompared: [String]

        enum CodingKeys: String, CodingKey {
            case label, from, to
            case fiscalMonth = "fiscal_month"
            case fiscalMonthsCompared = "fiscal_months_compared"
        }
    }

    struct Headline: Encodable {
        var currency: String
        var ledgerMoney: String
        var appleMoney: String
        var matchedMoney: String
        var unexplainedMoney: String
        var matchedShare: Double
        var explainedShare: Double

        enum CodingKeys: String, CodingKey {
            case currency
            case ledgerMoney = "ledger_money"
            case appleMoney = "apple_money"
            case matchedMoney = "matched_money"
            case unexplainedMoney = "unexplained_money"
            case matchedShare = "matched_share"
            case explainedShare = "explained_share"
        }

        /// A currency's headline, its money as exact decimals.
        init(_ headline: TieOutCurrencyHeadline) {
            currency = headline.currency
            ledgerMoney = TieOutJSON.money(headline.ledgerMoney, headline.currency)
            appleMoney = TieOutJSON.money(headline.appleMoney, headline.currency)
            matchedMoney = TieOutJSON.money(headline.matchedMoney, headline.currency)
            unexplainedMoney = TieOutJSON.money(headline.unexplainedMoney, headline.currency)
            matchedShare = headline.matchedShare
            explainedShare = headline.explainedShare
        }
    }

    struct Total: Encodable {
        var view: String
        var measure: String
        var currency: String
        var appleCurrency: String
        var ledgerAmount: String
        var ledgerAmountMilliunits: Int64
        var appleAmount: String
        var appleAmountMilliunits: Int64
        var difference: String?
        var differenceMilliunits: Int64?
        var byCause: [String: Int64]

        enum CodingKeys: String, CodingKey {
            case view, measure, currency
            case appleCurrency = "apple_currency"
            case ledgerAmount = "ledger_amount"
            case ledgerAmountMilliunits = "ledger_amount_milliunits"
            case appleAmount = "apple_amount"
            case appleAmountMilliunits = "apple_amount_milliunits"
            case difference
            case differenceMilliunits = "difference_milliunits"
            case byCause = "difference_milliunits_by_cause"
        }

        /// A total with each amount as a decimal and in milliunits, and its difference by cause.
        init(_ total: TieOutResult.Total) {
            view = total.view.rawValue
            measure = total.measure.rawValue
            currency = total.currency
            appleCurrency = total.appleCurrency
            ledgerAmount = TieOutJSON.money(total.ledgerAmount, total.currency)
            ledgerAmountMilliunits = total.ledgerAmount
            appleAmount = TieOutJSON.money(total.appleAmount, total.appleCurrency)
            appleAmountMilliunits = total.appleAmount
            difference = total.difference.map { TieOutJSON.money($0, total.currency) }
            differenceMilliunits = total.difference
            byCause = Dictionary(uniqueKeysWithValues: total.byCause.map { ($0.key.rawValue, $0.value) })
        }
    }

    struct Row: Encodable {
        var view: String
        var dayOrMonth: String
        var productId: String
        var country: String
        var currency: String
        var measure: String
        var cause: String
        var ledgerUnits: Int
        var ledgerAmountMilliunits: Int64
        var appleUnits: Int
        var appleAmountMilliunits: Int64
        var appleCurrency: String
        var differenceMilliunits: Int64?
        var detail: String

        enum CodingKeys: String, CodingKey {
            case view, country, currency, measure, cause, detail
            case dayOrMonth = "day_or_month"
            case productId = "product_id"
            case ledgerUnits = "ledger_units"
            case ledgerAmountMilliunits = "ledger_amount_milliunits"
            case appleUnits = "apple_units"
            case appleAmountMilliunits = "apple_amount_milliunits"
            case appleCurrency = "apple_currency"
            case differenceMilliunits = "difference_milliunits"
        }

        /// A row, its key spelled out and its amounts in milliunits.
        init(_ row: TieOutRow) {
            view = row.key.view.rawValue
            dayOrMonth = row.key.period
            productId = row.key.productId
            country = row.key.country
            currency = row.key.currency
            measure = row.key.measure.rawValue
            cause = row.key.cause.rawValue
            ledgerUnits = row.ledgerUnits
            ledgerAmountMilliunits = row.ledgerAmount
            appleUnits = row.appleUnits
            appleAmountMilliunits = row.appleAmount
            appleCurrency = row.key.appleCurrency
            differenceMilliunits = row.difference
            detail = row.detail
        }
    }

    /// A lost order: a Subscriber report row the ledger lacks.
    struct AppleOnly: Encodable {
        var day: String
        var productId: String?
        var subscriptionAppleId: String
        var country: String
        var currency: String
        var customerPrice: String
        var refund: Bool
        var subscriberId: String?
        var file: String
        var line: Int
        var cause: String

        enum CodingKeys: String, CodingKey {
            case day, country, currency, refund, file, line, cause
            case productId = "product_id"
            case subscriptionAppleId = "subscription_apple_id"
            case customerPrice = "customer_price"
            case subscriberId = "subscriber_id"
        }

        /// A lost order, with its source file and line and the cause's text.
        init(_ event: TieOutAppleEvent) {
            day = event.day.description
            productId = event.productId
            subscriptionAppleId = event.subscriptionAppleId
            country = event.country
            currency = event.currency
            customerPrice = TieOutJSON.money(event.amount, event.currency)
            refund = event.isRefund
            subscriberId = event.subscriberId
            file = event.fileName
            line = event.line
            cause = TieOutComparison.lostOrderText(event)
        }
    }

    /// Ledger money Apple never reported.
    struct LedgerOnly: Encodable {
        var transactionId: String
        var kind: String
        var instant: String
        var day: String
        var productId: String
        var country: String
        var currency: String
        var amount: String

        enum CodingKeys: String, CodingKey {
            case kind, instant, day, country, currency, amount
            case transactionId = "transaction_id"
            case productId = "product_id"
        }

        /// A ledger event Apple never reported, its instant in RFC 3339.
        init(_ event: TieOutLedgerEvent) {
            transactionId = event.transactionId
            kind = event.kind.rawValue
            instant = RFC3339.string(event.instant)
            day = event.day.description
            productId = event.productId
            country = event.country
            currency = event.currency
            amount = TieOutJSON.money(event.amount, event.currency)
        }
    }

    struct Unexplained: Encodable {
        var appleOnly: [AppleOnly]
        var ledgerOnly: [LedgerOnly]

        enum CodingKeys: String, CodingKey {
            case appleOnly = "apple_only"
            case ledgerOnly = "ledger_only"
        }
    }

    var period: Period
    var commission: CommissionPolicy
    var headline: [Headline]
    var totals: [Total]
    var rows: [Row]
    var unexplained: Unexplained
    var notes: [String]

    init(_ result: TieOutResult) {
        period = Period(
            label: result.periodLabel,
            from: result.from.description,
            to: result.to.description,
            fiscalMonth: result.fiscalMonth?.name,
            fiscalMonthsCompared: result.fiscalMonthsCompared.map(\.name)
        )
        commission = result.commission
        headline = result.headline.map(Headline.init)
        totals = result.totals.map(Total.init)
        rows = result.rows.map(Row.init)
        unexplained = Unexplained(
            appleOnly: result.appleOnly.map(AppleOnly.init),
            ledgerOnly: result.ledgerOnly.map(LedgerOnly.init)
        )
        notes = result.notes
    }

    /// `milliunits` as an exact decimal in `currency`'s minor unit.
    private static func money(_ milliunits: Int64, _ currency: String) -> String {
        CurrencyFormat.format(milliunits: milliunits, currency: currency)
    }

    /// Pretty-printed, key-sorted UTF-8 with a trailing newline.
    static func data(_ result: TieOutResult) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        var data = try encoder.encode(TieOutJSON(result))
        data.append(0x0A)
        return data
    }
}
