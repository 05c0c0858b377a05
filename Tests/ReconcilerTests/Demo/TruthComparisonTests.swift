import CivilTime
import Foundation
import Postgres
import Reconciler
import ReconcilerDemo
import TestSupport
import Testing

/// `TruthComparison` and `PriorRunSeeder` against rows written with plain SQL: each `expect` of the
/// simulator's truth file (decision, rejected, entitlement_ended with `not_after_run`), the recorded move
/// backwards, records without `expect`, and seeding what a previous night's run left.
@Suite struct TruthComparisonTests {
    static let bundle = "com.example.renewals"
    static let asOf = "2026-11-21T02:30:00Z"

    static func prepare() throws -> (TestDatabase, PostgresConnection) {
        let database = try TestDatabase.make()
        let connection = try database.connect()
        let sqlDirectory = EndToEndFixture.packageRoot.appendingPathComponent("sql").path
        for file in try MigrationDirectory(path: sqlDirectory).files() {
            try connection.executeScript(try String(contentsOfFile: file.path, encoding: .utf8))
        }
        return (database, connection)
    }

    /// A row as the run left it, and (when `run` is given) a done item of that run.
    static func row(
        _ c: PostgresConnection,
        _ otid: String,
        state: String?,
        expires: String,
        product: String = "p.monthly",
        autoRenew: Bool? = nil,
        verify: String? = "ok",
        run: Int64? = 1,
        movedBackwards: Bool = false,
        ledger: Int = 0
    ) throws {
        let id = try c.queryFirst(
            """
            WITH s AS (
                INSERT INTO subscriptions (user_id, product_id, original_transaction_id, latest_receipt, expires_at,
                                           state, auto_renew)
                VALUES ('u', $1, $2, 'receipt', $3::timestamptz, $4, $5) RETURNING id
            ), c AS (
                INSERT INTO subscription_checks (subscription_id, last_verify_status)
                SELECT id, $6 FROM s WHERE $6::text IS NOT NULL
            )
            SELECT id FROM s
            """,
            [product, otid, expires, state, autoRenew, verify]
        )?.decode("id", as: Int64.self)
        if let run {
            try c.execute(
                """
                INSERT INTO reconciliation_items (run_id, subscription_id, original_transaction_id, status,
                                                  expiry_moved_backwards)
                VALUES ($1, $2, $3, 'done', $4)
                """,
                [run, id, otid, movedBackwards]
            )
        }
        for n in 0..<ledger {
            try c.execute(
                """
                INSERT INTO subscription_transactions (transaction_id, original_transaction_id, product_id, kind)
                VALUES ($1, $2, $3, 'renewal')
                """,
                [otid + "-\(n)", otid, product]
            )
        }
    }

    static func truthLine(_ otid: String, _ fields: [String: Any]) -> String {
        var object: [String: Any] = [
            "original_transaction_id": otid, "scenario": fields["scenario"] ?? "s", "bundle_id": bundle,
            "apple_status": 0,
        ]
        for (k, v) in fields { object[k] = v }
        let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }

    static func compare(_ c: PostgresConnection, _ lines: [String]) throws -> TruthComparison.Report {
        try withTemporaryDirectory { dir in
            let path = dir.appendingPathComponent("truth.jsonl").path
            try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
            return try TruthComparison(connection: c, bundleId: bundle).compare(truthFile: path)
        }
    }

    static func fields(_ report: TruthComparison.Report, _ otid: String) -> Set<String> {
        Set(report.mismatches.filter { $0.originalTransactionId == otid }.map(\.field))
    }

    static func insertRun(_ c: PostgresConnection, id: Int64, fixedClock: Bool, asOf: String, finished: String) throws {
        try c.execute(
            """
            INSERT INTO reconciliation_runs (id, mode, status, as_of, parameters, finished_at)
            VALUES ($1, 'nightly', 'completed', $2::timestamptz, jsonb_build_object('fixedClock', $3::boolean),
                    $4::timestamptz)
            """,
            [id, asOf, fixedClock, finished]
        )
    }

    @Test func eachExpectationIsComparedByItsOwnRules() throws {
        let (database, c) = try Self.prepare()
        defer {
            c.close()
            database.drop()
        }
        try Self.insertRun(c, id: 1, fixedClock: true, asOf: Self.asOf, finished: "2026-11-21T02:40:00Z")
        let decided: [String: Any] = [
            "expect": "decision", "state": "expired", "expires_at": "2026-11-16T10:10:50.748Z",
            "product_id": "p.monthly", "auto_renew": false, "auto_renew_product_id": NSNull(),
            "grace_period_expires_at": NSNull(), "transaction_count": 2, "stored_product_id": "p.monthly",
            "stored_expires_at": "2027-11-16T10:10:50.748Z", "expires_at_rule": NSNull(), "prior_run": NSNull(),
        ]
        // Apple's earlier expiry taken and the move backwards recorded: a match.
        try Self.row(
            c,
            "d-ok",
            state: "expired",
            expires: "2026-11-16T10:10:50.748Z",
            autoRenew: false,
            movedBackwards: true,
            ledger: 2
        )
        // The same values, but the run did not record the move backwards.
        try Self.row(
            c,
            "d-silent",
            state: "expired",
            expires: "2026-11-16T10:10:50.748Z",
            autoRenew: false,
            ledger: 2
        )
        // The stored (later) expiry kept: the old bug.
        try Self.row(c, "d-kept", state: "active", expires: "2027-11-16T10:10:50.748Z", autoRenew: false, ledger: 2)

        let rejected: [String: Any] = [
            "expect": "rejected", "state": NSNull(), "expires_at": NSNull(), "stored_product_id": "p.monthly",
            "stored_expires_at": "2026-11-08T00:33:00.995Z",
        ]
        try Self.row(c, "r-ok", state: nil, expires: "2026-11-08T00:33:00.995Z", verify: "rejected")
        try Self.row(c, "r-moved", state: nil, expires: "2026-12-08T00:33:00Z", verify: "rejected")
        try Self.row(c, "r-decided", state: "active", expires: "2026-12-08T00:33:00Z", verify: "ok")

        let ended: [String: Any] = [
            "apple_status": 21010, "expect": "entitlement_ended", "state": "expired",
            "expires_at": "2026-12-11T21:50:04.207Z", "expires_at_rule": "not_after_run", "product_id": "p.monthly",
            "auto_renew": false, "transaction_count": 0, "stored_product_id": "p.monthly",
            "stored_expires_at": "2026-12-11T21:50:04.207Z",
        ]
        var endedPast = ended
        endedPast["expires_at"] = "2026-08-18T01:20:51.303Z"
        endedPast["stored_expires_at"] = "2026-08-18T01:20:51.303Z"
        // Ended at the run's clock (stored expiry later than the run), the move recorded.
        try Self.row(c, "e-ok", state: "expired", expires: Self.asOf, autoRenew: false, movedBackwards: true)
        // A stored expiry in the past stays.
        try Self.row(c, "e-past", state: "expired", expires: "2026-08-18T01:20:51.303Z", autoRenew: false)
        // Left active (21010 treated as a plain rejection): the old bug.
        try Self.row(c, "e-active", state: nil, expires: "2026-12-11T21:50:04.207Z", verify: "rejected")
        // Never finished by a run: the rule has no clock to go by.
        try Self.row(c, "e-norun", state: "expired", expires: Self.asOf, autoRenew: false, run: nil)

        // An older truth file without `expect`: a 21003 row rejected, a status-0 row decided.
        try Self.row(c, "legacy-rejected", state: nil, expires: "2026-11-01T00:00:00Z", verify: "rejected")
        try Self.row(c, "legacy-decided", state: "active", expires: "2026-12-01T00:00:00Z", autoRenew: true)

        let report = try Self.compare(
            c,
            [
                Self.truthLine("d-ok", decided), Self.truthLine("d-silent", decided), Self.truthLine("d-kept", decided),
                Self.truthLine("r-ok", rejected), Self.truthLine("r-moved", rejected),
                Self.truthLine("r-decided", rejected),
                Self.truthLine("e-ok", ended), Self.truthLine("e-past", endedPast), Self.truthLine("e-active", ended),
                Self.truthLine("e-norun", ended),
                Self.truthLine("legacy-rejected", ["apple_status": 21003]),
                Self.truthLine(
                    "legacy-decided",
                    [
                        "state": "active", "expires_at": "2026-12-01T00:00:00Z", "product_id": "p.monthly",
                        "auto_renew": true,
                    ]
                ),
                Self.truthLine("absent", decided),
            ]
        )
        #expect(report.compared == 13 && report.missing == 1)
        #expect(report.matched == 6, "\(report.mismatches)")
        for ok in ["d-ok", "r-ok", "e-ok", "e-past", "legacy-rejected", "legacy-decided"] {
            #expect(Self.fields(report, ok).isEmpty, "\(ok): \(report.mismatches)")
        }
        let backwards = "expiry moved backwards (recorded by the run)"
        #expect(Self.fields(report, "d-silent") == [backwards])
        #expect(Self.fields(report, "d-kept") == ["state", "expires_at", backwards])
        #expect(Self.fields(report, "r-moved") == ["expires_at (untouched)"])
        #expect(Self.fields(report, "r-decided") == ["verification", "state (untouched)", "expires_at (untouched)"])
        #expect(
            Self.fields(report, "e-active") == ["state", "expires_at (not after the run)", "auto_renew", backwards]
        )
        #expect(Self.fields(report, "e-norun") == ["expires_at (not after the run)"])
        let ruleMismatch = report.mismatches.first {
            $0.originalTransactionId == "e-active" && $0.field.hasPrefix("expires_at")
        }
        #expect(ruleMismatch?.expected == Self.asOf)
    }

    @Test func withoutAFixedClockTheRuleAcceptsAnyInstantOfTheRun() throws {
        let (database, c) = try Self.prepare()
        defer {
            c.close()
            database.drop()
        }
        try Self.insertRun(c, id: 7, fixedClock: false, asOf: Self.asOf, finished: "2026-11-21T02:40:00Z")
        let ended: [String: Any] = [
            "apple_status": 21010, "expect": "entitlement_ended", "state": "expired",
            "expires_at": "2026-12-11T00:00:00Z", "expires_at_rule": "not_after_run", "product_id": "p.monthly",
            "auto_renew": false, "stored_product_id": "p.monthly", "stored_expires_at": "2026-12-11T00:00:00Z",
        ]
        try Self.row(
            c,
            "during",
            state: "expired",
            expires: "2026-11-21T02:35:12.345Z",
            autoRenew: false,
            run: 7,
            movedBackwards: true
        )
        try Self.row(
            c,
            "after",
            state: "expired",
            expires: "2026-11-21T03:00:00Z",
            autoRenew: false,
            run: 7,
            movedBackwards: true
        )
        let report = try Self.compare(c, [Self.truthLine("during", ended), Self.truthLine("after", ended)])
        #expect(Self.fields(report, "during").isEmpty, "\(report.mismatches)")
        #expect(Self.fields(report, "after") == ["expires_at (not after the run)"])
        #expect(report.mismatches.first?.expected == "between 2026-11-21T02:30:00Z and 2026-11-21T02:40:00Z")
    }

    @Test func priorRunsAreSeededIntoTheirRowsOnly() throws {
        let (database, c) = try Self.prepare()
        defer {
            c.close()
            database.drop()
        }
        try Self.row(
            c,
            "revoked-row",
            state: nil,
            expires: "2027-09-09T05:51:38.683Z",
            product: "p.yearly",
            verify: nil,
            run: nil
        )
        try Self.row(c, "plain", state: nil, expires: "2026-11-30T00:00:00Z", verify: nil, run: nil)
        let prior: [String: Any] = [
            "verified_at": "2026-11-03T17:26:10.517Z", "state": "revoked", "expires_at": "2026-10-30T18:46:05.470Z",
            "product_id": "p.yearly", "revoked_at": "2026-10-30T18:46:05.470Z",
        ]
        let seeded = try withTemporaryDirectory { dir in
            let path = dir.appendingPathComponent("truth.jsonl").path
            let lines = [
                Self.truthLine("revoked-row", ["prior_run": prior]), Self.truthLine("plain", ["prior_run": NSNull()]),
            ]
            try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
            return try PriorRunSeeder(connection: c).seed(truthFile: path)
        }
        #expect(seeded == 1)
        let revoked = try #require(
            try c.queryFirst(
                """
                SELECT state, expires_at, revoked_at, last_verified_at, last_verify_status, product_id
                  FROM subscriptions LEFT JOIN subscription_checks ON subscription_id = id WHERE original_transaction_id = 'revoked-row'
                """
            )
        )
        #expect(try revoked.decode("state", as: String?.self) == "revoked")
        func ms(_ date: Date?) -> Int64? { date.map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) } }
        #expect(ms(try revoked.decode("expires_at", as: Date?.self)) == ms(RFC3339.parse("2026-10-30T18:46:05.470Z")))
        #expect(ms(try revoked.decode("revoked_at", as: Date?.self)) == ms(RFC3339.parse("2026-10-30T18:46:05.470Z")))
        #expect(
            ms(try revoked.decode("last_verified_at", as: Date?.self)) == ms(RFC3339.parse("2026-11-03T17:26:10.517Z"))
        )
        #expect(try revoked.decode("product_id", as: String.self) == "p.yearly")
        #expect(try revoked.decode("last_verify_status", as: String?.self) == "ok")
        let plain = try #require(
            try c.queryFirst(
                "SELECT state, last_verified_at FROM subscriptions LEFT JOIN subscription_checks ON subscription_id = id WHERE original_transaction_id = 'plain'"
            )
        )
        #expect(try plain.decode("state", as: String?.self) == nil)
        #expect(try plain.decode("last_verified_at", as: Date?.self) == nil)
    }
}
