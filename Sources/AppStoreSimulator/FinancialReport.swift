/// The Financial reports of one fiscal month (docs/simulator.md, "App Store Connect reports"): the paid events (free
/// trials have no sale) that Apple settled in the month, by `SalesEvent.settlementDay`. `consolidated()` is
/// FINANCIAL / ZZ: one section per currency, a row per product, country, sale or return and unit amounts, each
/// section ending with Apple's `Total_Rows`, `Total_Amount` and `Total_Units`; a return has a negative quantity,
/// extended partner share and customer price, a positive partner share; `detailed()` is FINANCE_DETAIL / Z1
/// (`FinancialReport+Detail.swift`). Formats as docs/apple-reports.md describes them; dates `MM/DD/YYYY`.
struct FinancialReport: Sendable {
    static let consolidatedColumns = [
        "Start Date", "End Date", "UPC", "ISRC/ISBN", "Vendor Identifier", "Quantity", "Partner Share",
        "Extended Partner Share", "Partner Share Currency", "Sales or Return", "Apple Identifier",
        "Artist/Show/Developer/Author", "Title", "Label/Studio/Network/Developer/Publisher", "Grid",
        "Product Type Identifier", "ISAN/Other Identifier", "Country Of Sale", "Pre-order Flag", "Promo Code",
        "Customer Price", "Customer Currency",
    ]
    /// Apple's product type of an auto-renewable subscription.
    static let productType = "IAY"
    static let developerName = "Example Developer"

    let population: Population
    let month: FiscalMonth
    /// The month's paid events, by instant.
    let events: [SalesEvent]

    /// Keeps the events of `candidates` that Apple settled in `month` and that carry money.
    init(population: Population, month: FiscalMonth, candidates: [SalesEvent]) {
        self.population = population
        self.month = month
        events = candidates.filter { event in
            let settled = event.settlementDay(seed: population.seed)
            return event.customerPrice != 0 && settled >= month.first && settled <= month.last
        }
    }

    /// One line of a Financial report: a sale (`S`) or return (`R`) of `quantity` units at unit amounts (positive;
    /// `signedCustomerPrice` is negative for a return; docs/simulator.md, "App Store Connect reports").
    struct Line: Hashable {
        var product: SimProduct
        var storefront: Storefront
        var saleOrReturn: String
        var partnerShare: Int64
        var customerPrice: Int64

        var signedCustomerPrice: Int64 { saleOrReturn == "R" ? -customerPrice : customerPrice }
    }

    static func line(_ event: SalesEvent) -> Line {
        Line(
            product: event.transaction.product,
            storefront: event.storefront,
            saleOrReturn: event.kind == .refund ? "R" : "S",
            partnerShare: abs(event.proceeds),
            customerPrice: abs(event.customerPrice)
        )
    }

    /// The consolidated report's text.
    func consolidated() -> String {
        var quantities: [Line: Int] = [:]
        for event in events { quantities[Self.line(event), default: 0] += event.units }
        let currencies = Set(quantities.keys.map(\.storefront.currency)).sorted()
        var lines: [String] = []
        for currency in currencies {
            let section = quantities.filter { $0.key.storefront.currency == currency }.sorted {
                Self.order($0.key, $1.key)
            }
            lines.append(Self.consolidatedColumns.joined(separator: "\t"))
            var amount: Int64 = 0
            var units = 0
            for (line, quantity) in section {
                lines.append(consolidatedRow(line, quantity: quantity).joined(separator: "\t"))
                amount += Int64(quantity) * line.partnerShare
                units += quantity
            }
            let storefront = section[0].key.storefront
            lines += [
                "", "Total_Rows\t\(section.count)", "Total_Amount\t\(storefront.signedDecimal(amount))",
                "Total_Units\t\(units)", "",
            ]
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func order(_ a: Line, _ b: Line) -> Bool {
        (a.product.productId, a.storefront.code, a.saleOrReturn, a.partnerShare, a.customerPrice)
            < (b.product.productId, b.storefront.code, b.saleOrReturn, b.partnerShare, b.customerPrice)
    }

    private func consolidatedRow(_ line: Line, quantity: Int) -> [String] {
        let s = line.storefront
        return [
            month.first.us, month.last.us, "", "", line.product.productId, String(quantity),
            s.signedDecimal(line.partnerShare), s.signedDecimal(Int64(quantity) * line.partnerShare), s.currency,
            line.saleOrReturn, population.catalog.appleId(of: line.product), Self.developerName,
            line.product.displayName, "", "", Self.productType, "", s.country, "", "",
            s.signedDecimal(line.signedCustomerPrice), s.currency,
        ]
    }
}
