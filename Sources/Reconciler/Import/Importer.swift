import Foundation
import Postgres

/// Loads an import file (JSONL or CSV) into `subscriptions`, upserting by `original_transaction_id`.
///
/// Streaming: records are parsed and written in batches (one multi-row statement each), so a million
/// lines load in constant memory. All-or-nothing by default: the whole file is one transaction and any
/// invalid line rolls it back (every bad line is still named); `skipInvalid` loads the valid lines.
///
/// Never moves data backwards: for an existing row, the receipt and expiry are replaced only when the
/// file's `expires_at` is not older than the stored one (the reconciler may already know more than the
/// app did); user id, bundle id and environment are refreshed from the file.
public struct Importer {
    public struct Result: Sendable {
        public var inserted = 0
        public var updated = 0
        /// Existing rows whose stored expiry is newer than the file's: receipt and expiry kept.
        public var keptNewer = 0
        public var invalid: [ImportLineError] = []
        public var warnings: [String] = []
        public var committed = false
        public var totalValid: Int { inserted + updated + keptNewer }
    }

    public let connectionString: String
    public var batchSize = 1000

    public init(connectionString: String) {
        self.connectionString = connectionString
    }

    /// Imports `path` (`-` for standard input).
    /// - Throws: `ImportFileError` (wrapped as a usage error) for file-level problems, database errors as they come.
    public func importFile(_ path: String, format: ImportFormat? = nil, skipInvalid: Bool) throws -> Result {
        let parser: ImportParser
        do {
            if path == "-" {
                parser = try ImportParser(fileHandle: .standardInput, name: "<stdin>", format: format)
            } else {
                parser = try ImportParser(path: path, format: format)
            }
        } catch {
            throw UsageError(error.description)
        }
        let conn = try PostgresConnection(connectionString)
        defer { conn.close() }
        var result = Result()
        try conn.execute("BEGIN")
        do {
            var batch: [ImportRecord] = []
            batch.reserveCapacity(batchSize)
            for item in parser {
                switch item {
                case .success(let record):
                    // Once a line is invalid in all-or-nothing mode nothing will be committed: keep validating only.
                    if skipInvalid || result.invalid.isEmpty {
                        batch.append(record)
                        if batch.count >= batchSize {
                            try upsert(batch, conn, into: &result)
                            batch.removeAll(keepingCapacity: true)
                        }
                    }
                case .failure(let error):
                    result.invalid.append(error)
                    if !skipInvalid { batch.removeAll(keepingCapacity: true) }
                }
            }
            if !batch.isEmpty && (skipInvalid || result.invalid.isEmpty) { try upsert(batch, conn, into: &result) }
            result.warnings = parser.warnings
            if result.invalid.isEmpty || skipInvalid {
                try conn.execute("COMMIT")
                result.committed = true
            } else {
                try conn.execute("ROLLBACK")
                result.inserted = 0
                result.updated = 0
                result.keptNewer = 0
            }
        } catch {
            _ = try? conn.execute("ROLLBACK")
            throw error
        }
        return result
    }

    private func upsert(_ records: [ImportRecord], _ conn: PostgresConnection, into result: inout Result) throws {
        // `old` sees the rows as they were before this statement (one snapshot for every CTE), so each
        // returned row says whether it was new, replaced, or kept because the stored expiry is newer.
        let rows = try conn.query(
            """
            WITH v AS (
                SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::text[],
                                     $7::text[])
                    AS v(user_id, product_id, original_transaction_id, latest_receipt, expires_at, environment, bundle_id)
            ), old AS (
                SELECT s.original_transaction_id, s.expires_at
                  FROM subscriptions s JOIN v USING (original_transaction_id)
            ), up AS (
                INSERT INTO subscriptions AS s (user_id, product_id, original_transaction_id, latest_receipt,
                                                expires_at, environment, bundle_id)
                SELECT user_id, product_id, original_transaction_id, latest_receipt, expires_at, environment, bundle_id
                  FROM v
                ON CONFLICT (original_transaction_id) DO UPDATE SET
                    user_id = EXCLUDED.user_id,
                    bundle_id = COALESCE(EXCLUDED.bundle_id, s.bundle_id),
                    environment = COALESCE(EXCLUDED.environment, s.environment),
                    product_id = CASE WHEN s.expires_at IS NULL OR EXCLUDED.expires_at >= s.expires_at
                                      THEN EXCLUDED.product_id ELSE s.product_id END,
                    latest_receipt = CASE WHEN s.expires_at IS NULL OR EXCLUDED.expires_at >= s.expires_at
                                          THEN EXCLUDED.latest_receipt ELSE s.latest_receipt END,
                    expires_at = GREATEST(s.expires_at, EXCLUDED.expires_at)
                RETURNING s.original_transaction_id
            )
            SELECT old.original_transaction_id IS NULL AS inserted,
                   COALESCE(old.expires_at > v.expires_at, false) AS kept_newer
              FROM up JOIN v USING (original_transaction_id)
              LEFT JOIN old USING (original_transaction_id)
            """,
            [
                records.map { Optional($0.userID) },
                records.map { Optional($0.productID) },
                records.map { Optional($0.originalTransactionID) },
                records.map { Optional($0.latestReceipt) },
                records.map { Optional($0.expiresAt) },
                records.map { $0.environment?.rawValue },
                records.map { $0.bundleID },
            ])
        for row in rows {
            if try row.decode("inserted", as: Bool.self) {
                result.inserted += 1
            } else if try row.decode("kept_newer", as: Bool.self) {
                result.keptNewer += 1
            } else {
                result.updated += 1
            }
        }
    }
}
