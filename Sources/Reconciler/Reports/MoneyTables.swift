import Foundation

/// The rows of money.csv: one per currency and product, from the ledger's prices
/// (`MoneyByCurrency`, source `ledger (App Store Server API)`) and from the catalog estimates
/// (`MoneySummary`, source `catalog (products table)`), with amounts as exact decimal strings in the
/// currency's minor unit (JPY `1500`, USD `9.99`). Never a row summed across currencies. The last column,
/// `scope`, says whether a row is the period's money or history found (dated before the period, found by this
/// run; docs/reports.md, "The period"); the three before it, a ledger row's estimated proceeds (empty for a
/// catalog row).
public enum MoneyTables {
    /// money.csv columns, in order.
    public static let columns = [
        "currency", "product_id", "source", "paid_transactions", "gross", "full_refunds", "refunded_full",
        "prorated_refunds", "refunded_prorated", "refunds", "refunded", "net", "estimated_proceeds",
        "estimated_proceeds_refunded", "estimated_net_proceeds", "scope",
    ]
    /// Counts and amounts (never neutralised when they look numeric, so `-4.50` stays a number).
    public static let numericColumns: Set<String> = [
        "paid_transactions", "gross", "full_refunds", "refunded_full", "prorated_refunds", "refunded_prorated",
        "refunds", "refunded", "net", "estimated_proceeds", "estimated_proceeds_refunded", "estimated_net_proceeds",
    ]

    /// Every row, sorted by scope (the period first), currency, then source (ledger first), then product.
    public static func rows(_ money: MoneySummary) -> [[String]] {
        var rows: [(key: [String], row: [String])] = []
        for (order, scope, byCurrency) in [
            ("0", PeriodScope.period, money.byCurrency), ("1", PeriodScope.historyFound, money.historyFound),
        ] {
            for currency in byCurrency.codes {
                for line in byCurrency.currencies[currency]?.products ?? [] {
                    rows.append(
                        (
                            [order, currency, "0", line.productId ?? ""],
                            ledgerRow(line) + proceedsCells(line) + [scope.rawValue]
                        )
                    )
                }
            }
        }
        for line in money.products {
            for price in line.prices {
                rows.append(
                    (
                        ["0", price.currency, "1", line.productId],
                        catalogRow(line, price) + ["", "", "", PeriodScope.period.rawValue]
                    )
                )
            }
        }
        return rows.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map(\.row)
    }

    /// One ledger row (in `columns` order, without `scope`).
    public static func ledgerRow(_ f: LedgerMoneyFigures) -> [String] {
        [
            f.currency, f.productId ?? "", LedgerCurrencyMoney.source, String(f.paidTransactions), f.gross,
            String(f.fullRefunds), f.refundedFull, String(f.proratedRefunds), f.refundedProrated, String(f.refunds),
            f.refunded, f.net,
        ]
    }

    /// The estimated proceeds of a ledger row (before `scope`): proceeds, proceeds reversed by refunds, net.
    /// Catalog rows leave them empty (docs/reports.md, "Estimated proceeds").
    public static func proceedsCells(_ f: LedgerMoneyFigures) -> [String] {
        [f.proceeds, f.proceedsRefunded, f.netProceeds]
    }

    /// One catalog-estimate row (without `scope`): paid renewals x price as gross, refunds x price as full refunds.
    public static func catalogRow(_ line: MoneySummary.ProductLine, _ price: MoneySummary.Price) -> [String] {
        let revenue = Decimal(string: price.renewalRevenue, locale: Locale(identifier: "en_US_POSIX")) ?? 0
        let refunded = Decimal(string: price.refunded, locale: Locale(identifier: "en_US_POSIX")) ?? 0
        let c = price.currency
        return [
            c, line.productId, MoneySummary.catalogSource, String(line.paidRenewals),
            CurrencyFormat.format(revenue, currency: c), String(line.paidRefunds),
            CurrencyFormat.format(refunded, currency: c), "0", CurrencyFormat.format(0, currency: c),
            String(line.paidRefunds), CurrencyFormat.format(refunded, currency: c),
            CurrencyFormat.format(revenue - refunded, currency: c),
        ]
    }
}
