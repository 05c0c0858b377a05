import ArgumentParser
import Foundation
import Reconciler

/// `renewal-reconciler products import FILE.csv`: replaces the `products` catalog with a CSV price list.
struct ProductsImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Replace the products catalog with a CSV price list (one transaction).",
        discussion: """
            CSV with a header row: product_id, currency (ISO 4217), price (customer price per period, at most the \
            currency's minor-unit places), period (P1W, P1M, P2M, P3M, P6M, P1Y), and optionally intro_price \
            (the pay-as-you-go introductory price per period), subscription_group_id, display_name. One row per \
            product and currency. The file is the whole price list: it replaces every row of the table, in one \
            transaction. Any bad line (named with its line and column) loads nothing and exits 64.
            """
    )

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var logging: LoggingOptions

    @Argument(help: ArgumentHelp("The CSV price list.", valueName: "file.csv"))
    var file: String

    func run() throws {
        logging.bootstrap()
        try runReportingErrors {
            let result = try CatalogImporter(connectionString: try database.connectionString()).importFile(file)
            print(
                "\(file): \(result.rows) prices of \(result.products) products in "
                    + "\(result.currencies.joined(separator: ", ")) loaded; \(result.replaced) previous rows replaced"
            )
        }
    }
}
