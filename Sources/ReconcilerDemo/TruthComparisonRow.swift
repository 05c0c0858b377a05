import Foundation
import Postgres

/// One row of `TruthComparison`'s query, as a truth record's checks read it: what the row holds of the entitlement
/// (state, expiry, product), decoded once whatever the record expects, and any other column on demand.
struct TruthComparisonRow {
    private let row: PostgresRow
    let state: String?
    let expiresAt: Date?
    let productId: String

    init(_ row: PostgresRow) throws {
        self.row = row
        state = try row.decode("state")
        expiresAt = try row.decode("expires_at")
        productId = try row.decode("product_id")
    }

    /// Decodes column `column` as `T`; an optional `T` for nullable columns.
    func decode<T: PostgresDecodable>(_ column: String, as type: T.Type = T.self) throws -> T {
        try row.decode(column, as: type)
    }
}
