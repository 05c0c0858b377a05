import ArgumentParser

/// `renewal-reconciler products ...`: the price catalog that prices verifyReceipt transactions.
struct ProductsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "products",
        abstract: "The price catalog (products table) that prices transactions read through verifyReceipt.",
        subcommands: [ProductsImportCommand.self]
    )
}
