import Foundation
import Postgres

/// Loads a price catalog (`CatalogFile`) into `products`, replacing the whole table in one transaction: the file
/// is the complete price list, so a product or currency left out of it is no longer priced, and a failure leaves
/// the previous catalog as it was (docs/operations.md, "The price catalog").
public struct CatalogImporter {
    /// What an import changed.
    public struct Result: Sendable, Equatable {
        /// Rows loaded.
        public var rows: Int
        /// Rows of the previous catalog that were replaced.
        public var replaced: Int
        /// Distinct products and currencies loaded.
        public var products: Int
        public var currencies: [String]
    }

    public let connectionString: String

    public init(connectionString: String) {
        self.connectionString = connectionString
    }

    /// Checks `path` (nothing is written when it has a problem) and replaces `products` with its rows.
    /// - Throws: `CatalogFileError` for the file, a database error otherwise (the old catalog is kept).
    public func importFile(_ path: String) throws -> Result {
        let prices = try CatalogFile.load(path: path)
        let connection = try PostgresConnection(connectionString)
        defer { connection.close() }
        try SchemaRequirement.check(connection)
        return try connection.transaction { db in try Self.replace(with: prices, db) }
    }

    /// Replaces every row of `products` with `prices`, on `db` (inside the caller's transaction).
    static func replace(with prices: [ProductPrice], _ db: PostgresConnection) throws -> Result {
        let replaced =
            try db.queryFirst("WITH d AS (DELETE FROM products RETURNING 1) SELECT count(*) AS n FROM d")?
            .decode("n", as: Int.self) ?? 0
        func text(_ value: Decimal?) -> String? { value.map { "\($0)" } }
        _ = try db.execute(
            """
            INSERT INTO products (product_id, currency, price, period, intro_price, subscription_group_id, display_name,
                                  apple_id)
            SELECT * FROM unnest($1::text[], $2::text[], $3::numeric[], $4::text[], $5::numeric[], $6::text[],
                                 $7::text[], $8::text[])
            """,
            [
                prices.map { Optional($0.productId) },
                prices.map { Optional($0.currency) },
                prices.map { text($0.price) },
                prices.map { Optional($0.period) },
                prices.map { text($0.introPrice) },
                prices.map { $0.subscriptionGroupId },
                prices.map { $0.displayName },
                prices.map { $0.appleId },
            ]
        )
        return Result(
            rows: prices.count,
            replaced: replaced,
            products: Set(prices.map(\.productId)).count,
            currencies: Set(prices.map(\.currency)).sorted()
        )
    }
}
