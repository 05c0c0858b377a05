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
        func money(_ milliunits: Int64, _ currency: String) -> String {
            CurrencyFormat.format(milliunits: milliunits, currency: currency)
        }
        period = Period(
            label: result.periodLabel,
            from: result.from.description,
            to: result.to.description,
            fiscalMonth: result.fiscalMonth?.name,
            fiscalMonthsCompared: result.fiscalMonthsCompared.map(\.name)
        )
        commission = result.commission
        headline = result.headline.map {
            Headline(
                currency: $0.currency,
                ledgerMoney: money($0.ledgerMoney, $0.currency),
                appleMoney: money($0.appleMoney, $0.currency),
                matchedMoney: money($0.matchedMoney, $0.currency),
                unexplainedMoney: money($0.unexplainedMoney, $0.currency),
                matchedShare: $0.matchedShare,
                explainedShare: $0.explainedShare
            )
        }
        totals = result.totals.map {
            Total(
                view: $0.view.rawValue,
                measure: $0.measure.rawValue,
                currency: $0.currency,
                appleCurrency: $0.appleCurrency,
                ledgerAmount: money($0.ledgerAmount, $0.currency),
                ledgerAmountMilliunits: $0.ledgerAmount,
                appleAmount: money($0.appleAmount, $0.appleCurrency),
                appleAmountMilliunits: $0.appleAmount,
                difference: $0.difference.map { [currency = $0.currency] in money($0, currency) },
                differenceMilliunits: $0.difference,
                byCause: Dictionary(uniqueKeysWithValues: $0.byCause.map { ($0.key.rawValue, $0.value) })
            )
        }
        rows = result.rows.map {
            Row(
                view: $0.key.view.rawValue,
                dayOrMonth: $0.key.period,
                productId: $0.key.productId,
                country: $0.key.country,
                currency: $0.key.currency,
                measure: $0.key.measure.rawValue,
                cause: $0.key.cause.rawValue,
                ledgerUnits: $0.ledgerUnits,
                ledgerAmountMilliunits: $0.ledgerAmount,
                appleUnits: $0.appleUnits,
                appleAmountMilliunits: $0.appleAmount,
                appleCurrency: $0.key.appleCurrency,
                differenceMilliunits: $0.difference,
                detail: $0.detail
            )
        }
        unexplained = Unexplained(
            appleOnly: result.appleOnly.map {
                AppleOnly(
                    day: $0.day.description,
                    productId: $0.productId,
                    subscriptionAppleId: $0.subscriptionAppleId,
                    country: $0.country,
                    currency: $0.currency,
                    customerPrice: money($0.amount, $0.currency),
                    refund: $0.isRefund,
                    subscriberId: $0.subscriberId,
                    file: $0.fileName,
                    line: $0.line,
                    cause: TieOutComparison.lostOrderText($0)
                )
            },
            ledgerOnly: result.ledgerOnly.map {
                LedgerOnly(
                    transactionId: $0.transactionId,
                    kind: $0.kind.rawValue,
                    instant: RFC3339.string($0.instant),
                    day: $0.day.description,
                    productId: $0.productId,
                    country: $0.country,
                    currency: $0.currency,
                    amount: money($0.amount, $0.currency)
                )
            }
        )
        notes = result.notes
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
