import Foundation

/// The rows of money.csv: one per currency and product, from the ledger's prices
/// (`MoneyByCurrency`, source `ledger (App Store Server API)`) and from the catalog's
/// (`MoneySummary.catalog`, source `catalog (products table)`), with amounts as exact decimal strings in the
/// currency's minor unit (JPY `1500`, USD `9.99`). Never a row summed across currencies. The last column,
/// `scope`, says whether a row is the period's money or history found (dated before the period, found by this
/// run; docs/reports.md, "The period"); the three before it, the row's estimated proceeds.
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
        for (order, scope, source, byCurrency) in [
            ("0", PeriodScope.period, "0", money.byCurrency), ("1", PeriodScope.historyFound, "0", money.historyFound),
            ("0", PeriodScope.period, "1", money.catalog),
        ] {
            for currency in byCurrency.codes {
                guard let money = byCurrency.currencies[currency] else { continue }
                for line in money.products {
                    rows.append(
                        (
                            [order, currency, source, line.productId ?? ""],
                            ledgerRow(line, source: money.source) + proceedsCells(line) + [scope.rawValue]
                        )
                    )
                }
            }
        }
        return rows.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map(\.row)
    }

    /// One row of ledger or catalog figures (in `columns` order, without the proceeds and `scope`).
    public static func ledgerRow(_ f: LedgerMoneyFigures, source: String = LedgerCurrencyMoney.source) -> [String] {
        [
            f.currency, f.productId ?? "", source, String(f.paidTransactions), f.gross,
            String(f.fullRefunds), f.refundedFull, String(f.proratedRefunds), f.refundedProrated, String(f.refunds),
            f.refunded, f.net,
        ]
    }

    /// The estimated proceeds of a row (before `scope`): proceeds, proceeds reversed by refunds, net
    /// (docs/reports.md, "Estimated proceeds").
    public static func proceedsCells(_ f: LedgerMoneyFigures) -> [String] {
        [f.proceeds, f.proceedsRefunded, f.netProceeds]
    }
}
