/// The rows of money-storefronts.csv: the ledger's money (App Store Server API prices) per currency, storefront
/// and product, the finest grain, so a spreadsheet pivots it by storefront or by product; summing its rows per
/// currency and product gives money.csv's ledger rows. verifyReceipt carries no storefront: catalog estimates
/// are not in it. docs/reports.md ("money-storefronts.csv").
public enum StorefrontMoneyTables {
    /// money-storefronts.csv columns, in order.
    public static let columns = [
        "currency", "storefront", "product_id", "source", "paid_transactions", "gross", "full_refunds",
        "refunded_full", "prorated_refunds", "refunded_prorated", "refunds", "refunded", "net", "estimated_proceeds",
        "estimated_proceeds_refunded", "estimated_net_proceeds", "scope",
    ]
    /// Counts and amounts.
    public static let numericColumns = MoneyTables.numericColumns

    /// Every row, sorted by scope (the period first), currency, storefront, then product.
    public static func rows(_ money: MoneySummary) -> [[String]] {
        var rows: [[String]] = []
        for (scope, byCurrency) in [(PeriodScope.period, money.byCurrency), (.historyFound, money.historyFound)] {
            for code in byCurrency.codes {
                for storefront in byCurrency.currencies[code]?.storefronts ?? [] {
                    for line in storefront.products {
                        var row = MoneyTables.ledgerRow(line)
                        row.insert(storefront.storefront, at: 1)
                        rows.append(row + MoneyTables.proceedsCells(line) + [scope.rawValue])
                    }
                }
            }
        }
        return rows
    }
}
