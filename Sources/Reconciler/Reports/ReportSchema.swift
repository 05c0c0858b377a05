/// Which optional tables the database has, read once per report snapshot: the catalog of migration 002
/// (`products`, `dry_run_transactions`) and the Server API columns and tables of migration 004 (ledger
/// prices, `app_store_notifications`). A report of an older database leaves the missing parts empty.
public struct ReportSchema: Sendable, Equatable {
    public var hasCatalog: Bool
    public var hasServerAPI: Bool

    public init(hasCatalog: Bool, hasServerAPI: Bool) {
        self.hasCatalog = hasCatalog
        self.hasServerAPI = hasServerAPI
    }
}
