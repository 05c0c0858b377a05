/// The app's price list as its developer would keep it (docs/simulator.md, "Export files"): `catalog.csv`, one
/// row per product of the app and storefront currency of `Storefront.all`, with today's list price (the price
/// after the rise `Storefront.priceRiseBefore` the anchor) and the pay-as-you-go introductory price, in the CSV
/// shape `renewal-reconciler products import` reads. Prices paid before the rise are not in it: a price list
/// has only current prices.
struct CatalogExporter: Sendable {
    let population: Population

    /// The file's text (CRLF line ends, header first; rows by product, then currency in `Storefront.all` order).
    func csv() -> String {
        var lines = ["product_id,currency,price,period,intro_price,subscription_group_id,display_name"]
        for product in population.catalog.all {
            let period: String
            switch product.period {
            case .week: period = "P1W"
            case .month: period = "P1M"
            case .year: period = "P1Y"
            }
            for storefront in Storefront.all {
                let list = storefront.listPrice(product, purchase: population.anchor, anchor: population.anchor)
                lines.append(
                    [
                        product.productId, storefront.currency, storefront.decimal(list), period,
                        storefront.decimal(storefront.introPrice(list: list)), product.groupId,
                        product.displayName,
                    ].joined(separator: ",")
                )
            }
        }
        return lines.map { $0 + "\r\n" }.joined()
    }

    /// Writes `directory/catalog.csv`.
    func export(to directory: String) throws {
        let file = try BufferedFile(path: directory + "/catalog.csv")
        try file.write(Array(csv().utf8))
        try file.close()
    }
}
