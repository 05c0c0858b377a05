import CivilTime
import Foundation
import Postgres
import Reconciler

/// Puts into freshly imported rows what a previous night's run left in them, as the simulator's truth
/// file records it (`prior_run`: state, expiry, product, revoked time, when it verified them). The import
/// carries no state, so without this every imported row is "never verified" and always due; with it the
/// demo also shows that a row left `revoked` is verified again when the customer bought since.
public struct PriorRunSeeder {
    public let connection: PostgresConnection

    public init(connection: PostgresConnection) {
        self.connection = connection
    }

    /// Applies every `prior_run` of `truth.jsonl` at `path`; returns the number of rows changed.
    @discardableResult
    public func seed(truthFile path: String) throws -> Int {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw UsageError("cannot read truth file \(path)")
        }
        var ids: [String?] = []
        var states: [String?] = []
        var expiries: [Date?] = []
        var products: [String?] = []
        var revoked: [Date?] = []
        var verified: [Date?] = []
        let marker = Data("\"prior_run\":{".utf8)
        for line in data.split(separator: UInt8(ascii: "\n")) where !line.isEmpty {
            // Most lines have `"prior_run":null`: skip them without parsing.
            guard line.range(of: marker) != nil,
                let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
                let id = object["original_transaction_id"] as? String,
                let prior = object["prior_run"] as? [String: Any],
                let verifiedAt = (prior["verified_at"] as? String).flatMap(RFC3339.parse)
            else { continue }
            ids.append(id)
            states.append(prior["state"] as? String)
            expiries.append((prior["expires_at"] as? String).flatMap(RFC3339.parse))
            products.append(prior["product_id"] as? String)
            revoked.append((prior["revoked_at"] as? String).flatMap(RFC3339.parse))
            verified.append(verifiedAt)
        }
        guard !ids.isEmpty else { return 0 }
        let result = try connection.execute(
            """
            WITH seeded AS (
                UPDATE subscriptions s
                   SET state = v.state, expires_at = COALESCE(v.expires_at, s.expires_at),
                       product_id = COALESCE(v.product_id, s.product_id), revoked_at = v.revoked_at
                  FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::text[], $5::timestamptz[],
                              $6::timestamptz[]) AS v(original_transaction_id, state, expires_at, product_id,
                                                      revoked_at, verified_at)
                 WHERE s.original_transaction_id = v.original_transaction_id
                RETURNING s.id, v.verified_at
            )
            -- The run's bookkeeping (sql/018_subscription_checks.sql); no verified_version, as from a run before
            -- migration 003: a seeded revoked row counts as changed by the app.
            INSERT INTO subscription_checks (subscription_id, last_verified_at, last_verify_status, last_apple_status)
            SELECT id, verified_at, 'ok', 0 FROM seeded
            ON CONFLICT (subscription_id) DO UPDATE
               SET last_verified_at = EXCLUDED.last_verified_at, last_verify_status = 'ok', last_apple_status = 0
            """,
            [ids, states, expiries, products, revoked, verified]
        )
        return result.rowsAffected
    }
}
