/// The detailed Financial report (FINANCE_DETAIL, region Z1): a preamble with the month's start and end, a row per
/// event with its transaction and settlement dates, then Apple's summary per country (docs/apple-reports.md).
extension FinancialReport {
    static let detailColumns = [
        "Transaction Date", "Settlement Date", "Apple Identifier", "SKU", "Title", "Developer Name",
        "Product Type Identifier", "Country of Sale", "Quantity", "Partner Share", "Extended Partner Share",
        "Partner Share Currency", "Customer Price", "Customer Currency", "Sale or Return", "Promo Code", "Order Type",
        "Region",
    ]

    /// The region of a storefront's proceeds (`EU` for the euro, else the country).
    static func region(_ storefront: Storefront) -> String { storefront.currency == "EUR" ? "EU" : storefront.country }

    /// The detailed report's text.
    func detailed() -> String {
        var lines = ["Start Date\t\(month.first.us)", "End Date\t\(month.last.us)", ""]
        lines.append(Self.detailColumns.joined(separator: "\t"))
        var summary: [String: (storefront: Storefront, quantity: Int, amount: Int64)] = [:]
        for event in events {
            let line = Self.line(event)
            let s = event.storefront
            let extended = Int64(event.units) * line.partnerShare
            lines.append(
                [
                    ReportDay.containing(event.at).us, event.settlementDay(seed: population.seed).us,
                    population.catalog.appleId(of: line.product), line.product.productId, line.product.displayName,
                    Self.developerName, Self.productType, s.country, String(event.units),
                    s.signedDecimal(line.partnerShare), s.signedDecimal(extended), s.currency,
                    s.signedDecimal(line.signedCustomerPrice), s.currency, line.saleOrReturn, "", "", Self.region(s),
                ].joined(separator: "\t")
            )
            summary[s.code, default: (s, 0, 0)].quantity += event.units
            summary[s.code, default: (s, 0, 0)].amount += extended
        }
        lines += ["", "Country Of Sale\tPartner Share Currency\tQuantity\tExtended Partner Share"]
        for code in summary.keys.sorted() {
            guard let entry = summary[code] else { continue }
            let s = entry.storefront
            lines.append("\(s.country)\t\(s.currency)\t\(entry.quantity)\t\(s.signedDecimal(entry.amount))")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
