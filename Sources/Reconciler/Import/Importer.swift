import Foundation
import Postgres

/// Loads an import file (JSONL or CSV) into `subscriptions`, upserting by `original_transaction_id`.
///
/// Streaming: records are parsed and written in batches (one multi-row statement each), so a million
/// lines load in constant memory. All-or-nothing by default: the whole file is one transaction and any
/// invalid line rolls it back (every bad line is still named); `skipInvalid` loads the valid lines. A value
/// the database cannot store is an invalid line like any other, found before any statement runs; a file that
/// could not be read to its end (`ImportParser.stoppedEarly`) loads nothing, even with `skipInvalid`
/// (docs/operations.md, "Backfill, import, explain").
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
        /// The file was not read to its end (a read error, or a line without a line break for too long):
        /// nothing was loaded, even with `skipInvalid`.
        public var stoppedEarly = false
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
        let parser = try Self.parser(path, format: format)
        let conn = try PostgresConnection(connectionString)
        defer { conn.close() }
        var result = Result()
        try conn.execute("BEGIN")
        do {
            try conn.execute(
                """
                CREATE TEMP TABLE import_seen (original_transaction_id text PRIMARY KEY, line integer NOT NULL)
                ON COMMIT DROP
                """
            )
            var batch: [ImportRecord] = []
            batch.reserveCapacity(batchSize)
            for item in parser {
                switch item {
                case .success(let record):
                    // Every valid record goes through the duplicate check; once a line is invalid in
                    // all-or-nothing mode nothing will be committed, so the batch is only checked.
                    batch.append(record)
                    if batch.count >= batchSize {
                        try flush(batch, conn, skipInvalid: skipInvalid, into: &result)
                        batch.removeAll(keepingCapacity: true)
                    }
                case .failure(let error):
                    result.invalid.append(error)
                }
            }
            if !batch.isEmpty { try flush(batch, conn, skipInvalid: skipInvalid, into: &result) }
            result.invalid.sort { $0.line < $1.line }
            result.warnings = parser.warnings
            result.stoppedEarly = parser.stoppedEarly
            if (result.invalid.isEmpty || skipInvalid) && !parser.stoppedEarly {
                try conn.execute("COMMIT")
                result.committed = true
            } else {
                try conn.execute("ROLLBACK")
                result.inserted = 0
                result.updated = 0
                result.keptNewer = 0
            }
        } catch var error as PostgresError {
            _ = try? conn.execute("ROLLBACK")
            error.statement = nil  // an operator needs the server's message, not the statement
            throw error
        } catch {
            _ = try? conn.execute("ROLLBACK")
            throw error
        }
        return result
    }

    /// The parser of `path` (`-`: standard input); a file-level problem is a usage error.
    static func parser(_ path: String, format: ImportFormat?) throws -> ImportParser {
        do {
            // Duplicate ids are found in PostgreSQL (a temporary table), so memory stays constant.
            let options = ImportParser.Options(detectDuplicates: false)
            if path == "-" {
                return try ImportParser(fileHandle: .standardInput, name: "<stdin>", format: format, options: options)
            }
            return try ImportParser(path: path, format: format, options: options)
        } catch {
            throw UsageError(error.description)
        }
    }

    /// `records` less those for which `firstLine` names an earlier line with the same id: each of those is a
    /// duplicate in `result.invalid`.
    private static func droppingRepeats(
        _ records: [ImportRecord],
        into result: inout Result,
        firstLine: (ImportRecord) -> Int?
    ) -> [ImportRecord] {
        var kept: [ImportRecord] = []
        kept.reserveCapacity(records.count)
        for record in records {
            if let first = firstLine(record) {
                result.invalid.append(duplicate(record, firstLine: first))
            } else {
                kept.append(record)
            }
        }
        return kept
    }

    /// Names the batch's repeated ids (against every earlier line, via the temporary table), then upserts
    /// the rest unless the all-or-nothing import has already failed.
    private func flush(
        _ batch: [ImportRecord],
        _ conn: PostgresConnection,
        skipInvalid: Bool,
        into result: inout Result
    ) throws {
        var firstInBatch: [String: Int] = [:]
        let unique = Self.droppingRepeats(batch, into: &result) { record in
            if let first = firstInBatch[record.originalTransactionId] { return first }
            firstInBatch[record.originalTransactionId] = record.line
            return nil
        }
        let earlier = try conn.query(
            """
            WITH v AS (SELECT * FROM unnest($1::text[], $2::bigint[]) AS v(original_transaction_id, line)),
            inserted AS (
                INSERT INTO import_seen SELECT original_transaction_id, line FROM v
                ON CONFLICT (original_transaction_id) DO NOTHING
                RETURNING original_transaction_id
            )
            SELECT s.original_transaction_id, s.line FROM import_seen s JOIN v USING (original_transaction_id)
             WHERE s.original_transaction_id NOT IN (SELECT original_transaction_id FROM inserted)
            """,
            [unique.map { Optional($0.originalTransactionId) }, unique.map { Optional(Int64($0.line)) }]
        )
        var seenBefore: [String: Int] = [:]
        for row in earlier {
            seenBefore[try row.decode("original_transaction_id", as: String.self)] = try row.decode(
                "line",
                as: Int.self
            )
        }
        let fresh = Self.droppingRepeats(unique, into: &result) { seenBefore[$0.originalTransactionId] }
        if (skipInvalid || result.invalid.isEmpty) && !fresh.isEmpty { try upsert(fresh, conn, into: &result) }
    }

    static func duplicate(_ record: ImportRecord, firstLine: Int) -> ImportLineError {
        ImportLineError(
            line: record.line,
            field: "original_transaction_id",
            code: .duplicateTransaction,
            problem:
                "\(ImportRecordValidator.quoted(record.originalTransactionId)) already appeared on line \(firstLine)",
            firstLine: firstLine
        )
    }

    private func upsert(_ records: [ImportRecord], _ conn: PostgresConnection, into result: inout Result) throws {
        // `old` sees the rows as they were before this statement (one snapshot for every CTE), so each
        // returned row says whether it was new, replaced, or kept because the stored expiry is newer.
        let rows = try conn.query(
            """
            WITH v AS (
                SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::text[],
                                     $7::text[], $8::text[], $9::text[])
                    AS v(user_id, product_id, original_transaction_id, latest_receipt, expires_at, environment, bundle_id,
                         currency, app_account_token)
            ), old AS (
                SELECT s.original_transaction_id, s.expires_at
                  FROM subscriptions s JOIN v USING (original_transaction_id)
            ), up AS (
                INSERT INTO subscriptions AS s (user_id, product_id, original_transaction_id, latest_receipt,
                                                expires_at, environment, bundle_id, currency, app_account_token)
                SELECT user_id, product_id, original_transaction_id, latest_receipt, expires_at, environment, bundle_id,
                       currency, app_account_token
                  FROM v
                ON CONFLICT (original_transaction_id) DO UPDATE SET
                    user_id = EXCLUDED.user_id,
                    bundle_id = COALESCE(EXCLUDED.bundle_id, s.bundle_id),
                    currency = COALESCE(EXCLUDED.currency, s.currency),
                    app_account_token = COALESCE(EXCLUDED.app_account_token, s.app_account_token),
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
                records.map { Optional($0.userId) },
                records.map { Optional($0.productId) },
                records.map { Optional($0.originalTransactionId) },
                records.map { Optional($0.latestReceipt) },
                records.map { Optional($0.expiresAt) },
                records.map { $0.environment?.rawValue },
                records.map { $0.bundleId },
                records.map { $0.currency },
                records.map { $0.appAccountToken },
            ]
        )
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
