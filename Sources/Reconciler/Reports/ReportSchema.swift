/// Which optional tables the database has, read once per report snapshot: the catalog of migration 002
/// (`products`, `dry_run_transactions`) and the Server API columns and tables of migration 004 (ledger
/// prices, `app_store_notifications`), and migration 011's catalog prices (`subscriptions.currency`,
/// `products.intro_price`). A report of an older database leaves the missing parts empty.
public struct ReportSchema: Sendable, Equatable {
    public var hasCatalog: Bool
    public var hasServerAPI: Bool
    /// Migration 011: `subscriptions.currency` and `products.intro_price`.
    public var hasCatalogPrices: Bool
    /// Migration 016: the items' expiration intent and price-increase status.
    public var hasCustomerFacts: Bool

    public init(hasCatalog: Bool, hasServerAPI: Bool, hasCatalogPrices: Bool = false, hasCustomerFacts: Bool = false) {
        self.hasCatalog = hasCatalog
        self.hasServerAPI = hasServerAPI
        self.hasCatalogPrices = hasCatalogPrices
        self.hasCustomerFacts = hasCustomerFacts
    }
}
