import CivilTime
import Foundation
import Postgres
import ReceiptDomain
import Reconciler

/// Compares the database with the simulator's truth file (`truth.jsonl`), row by row, by the record's
/// `expect` (README, "App Store simulator"):
/// - `decision`: state, expiry, product, auto-renew status and product, grace expiry and the number of
///   ledger transactions Apple implies; when Apple's expiry is earlier than the row's before the run
///   (`prior_run.expires_at`, else `stored_expires_at`), a run must have recorded the move backwards;
/// - `rejected`: the answer was refused (`rejected` or `invalid_receipt`) and the row is untouched: no
///   state, the stored expiry and product;
/// - `entitlement_ended` (21010): state, product, auto-renew as given, and with `expires_at_rule`
///   `not_after_run` an expiry of min(`expires_at`, the clock of the run that finished the row).
/// - `signature_refused` (Server API, `forgedSubscriptions`): refused as `signed_data_refused`, the row as
///   it was before the run;
/// - `not_due`: the run must not have verified the row, which keeps `prior_run`'s state, expiry and product
///   (compared as a decision when no previous night verified the row: it was due as `unverified`).
/// Records without `expect` (older files) are read the old way: a non-0 status or another app's bundle id
/// means rejected. The demo exits 0 only on a 100% match.
public struct TruthComparison {
    public struct Mismatch: Sendable, CustomStringConvertible {
        public let originalTransactionId: String
        public let scenario: String
        public let field: String
        public let expected: String
        public let actual: String
        public var description: String {
            "\(originalTransactionId) (\(scenario)): \(field) expected \(expected), found \(actual)"
        }
    }

    public struct Report: Sendable {
        public var compared = 0
        public var matched = 0
        public var missing = 0
        public var mismatches: [Mismatch] = []
        public var mismatchCount = 0
        public var byScenario: [String: (matched: Int, total: Int)] = [:]
        public var matchRate: Double { compared == 0 ? 0 : Double(matched) / Double(compared) }
    }

    /// The instants a run's decisions may have used as "now": `as_of` with a fixed clock, else anything
    /// from `as_of` to the end of the run.
    struct RunClock {
        var earliest: Date
        var latest: Date
    }

    public let connection: PostgresConnection
    public let bundleId: String
    /// Keep at most this many mismatch details (all are counted).
    public var detailLimit = 50
    /// Compare with what the App Store Server API implies: a record's `server_api` object, when present,
    /// replaces its decision fields (docs/simulator.md, "A population and its truth").
    public var serverAPI = false
    /// With `serverAPI`: the subscriptions whose every answer the simulator signs with a fault (its
    /// `server-api/signature-faults.jsonl`). Each must be refused (`signed_data_refused`) and keep what it
    /// held before the run (`prior_run`, else what the app stored), whatever its record says.
    public var forgedSubscriptions: Set<String> = []

    public init(connection: PostgresConnection, bundleId: String) {
        self.connection = connection
        self.bundleId = bundleId
    }

    public func compare(truthFile path: String) throws -> Report {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw UsageError("cannot read truth file \(path)")
        }
        let runs = try runClocks()
        var report = Report()
        var batch: [[String: Any]] = []
        var lineNumber = 0
        for line in data.split(separator: UInt8(ascii: "\n")) where !line.isEmpty {
            lineNumber += 1
            guard var object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
                object["original_transaction_id"] is String
            else {
                throw UsageError("\(path): line \(lineNumber) is not a truth record")
            }
            if serverAPI, let view = object["server_api"] as? [String: Any] {
                object.merge(view) { _, new in new }
                if view["expect"] as? String == "rejected" { object.removeValue(forKey: "expires_at_rule") }
            }
            if serverAPI, let id = object["original_transaction_id"] as? String, forgedSubscriptions.contains(id) {
                object["expect"] = "signature_refused"
            }
            batch.append(object)
            if batch.count == 1000 {
                try compareBatch(batch, runs: runs, into: &report)
                batch.removeAll(keepingCapacity: true)
            }
        }
        if !batch.isEmpty { try compareBatch(batch, runs: runs, into: &report) }
        return report
    }

    private func runClocks() throws -> [Int64: RunClock] {
        let rows = try connection.query(
            """
            SELECT id, as_of, COALESCE((parameters->>'fixedClock')::boolean, false) AS fixed,
                   COALESCE(finished_at, now()) AS ended
              FROM reconciliation_runs
            """
        )
        var clocks: [Int64: RunClock] = [:]
        for row in rows {
            let asOf: Date = try row.decode("as_of")
            let fixed: Bool = try row.decode("fixed")
            let ended: Date = try row.decode("ended")
            clocks[try row.decode("id", as: Int64.self)] = RunClock(earliest: asOf, latest: fixed ? asOf : ended)
        }
        return clocks
    }

    private func compareBatch(_ truths: [[String: Any]], runs: [Int64: RunClock], into report: inout Report) throws {
        let ids = truths.compactMap { $0["original_transaction_id"] as? String }
        // Items are found through their primary key (run_id, subscription_id), one index probe per run.
        let rows = try connection.query(
            """
            SELECT s.original_transaction_id, s.state, s.expires_at, s.product_id, s.auto_renew,
                   s.auto_renew_product_id, s.grace_period_expires_at, c.last_verify_status, c.last_error,
                   s.app_account_token, s.app_transaction_id, s.expiration_intent, s.price_increase_status,
                   s.renewal_price_milliunits, s.renewal_currency, s.renewal_billing_plan_type,
                   (SELECT count(*) FROM subscription_transactions t
                     WHERE t.original_transaction_id = s.original_transaction_id) AS ledger_count,
                   i.last_run, COALESCE(i.moved_backwards, false) AS moved_backwards,
                   (SELECT f.due_reason FROM reconciliation_items f
                     WHERE f.run_id = ANY($2::bigint[]) AND f.subscription_id = s.id
                     ORDER BY f.run_id LIMIT 1) AS first_due_reason
              FROM subscriptions s
              LEFT JOIN subscription_checks c ON c.subscription_id = s.id
              LEFT JOIN LATERAL (
                  SELECT max(i.run_id) AS last_run, bool_or(i.expiry_moved_backwards) AS moved_backwards
                    FROM reconciliation_items i
                   WHERE i.run_id = ANY($2::bigint[]) AND i.subscription_id = s.id AND i.status = 'done'
              ) i ON true
             WHERE s.original_transaction_id = ANY($1::text[])
            """,
            [ids.map { Optional($0) }, runs.keys.sorted().map { Optional($0) }]
        )
        var byId: [String: PostgresRow] = [:]
        for row in rows { byId[try row.decode("original_transaction_id", as: String.self)] = row }
        for truth in truths {
            guard let otid = truth["original_transaction_id"] as? String else { continue }
            let scenario = truth["scenario"] as? String ?? "?"
            report.compared += 1
            var entry = report.byScenario[scenario] ?? (0, 0)
            entry.total += 1
            defer { report.byScenario[scenario] = entry }
            guard let row = byId[otid] else {
                report.missing += 1
                record(
                    Mismatch(
                        originalTransactionId: otid,
                        scenario: scenario,
                        field: "row",
                        expected: "present",
                        actual: "missing"
                    ),
                    into: &report
                )
                continue
            }
            var problems: [Mismatch] = []
            func check(_ field: String, _ expected: String, _ actual: String) {
                if expected != actual {
                    problems.append(
                        Mismatch(
                            originalTransactionId: otid,
                            scenario: scenario,
                            field: field,
                            expected: expected,
                            actual: actual
                        )
                    )
                }
            }
            try compareRow(truth, TruthComparisonRow(row), runs: runs, check)
            if problems.isEmpty {
                report.matched += 1
                entry.matched += 1
            } else {
                for p in problems { record(p, into: &report) }
            }
        }
    }

    /// Notes one difference between a truth record and its row: `check(field, expected, actual)`.
    private typealias Check = (_ field: String, _ expected: String, _ actual: String) -> Void

    /// The checks for one truth record against its row, by its expectation; `check(field, expected, actual)`
    /// notes a difference.
    private func compareRow(
        _ truth: [String: Any],
        _ row: TruthComparisonRow,
        runs: [Int64: RunClock],
        _ check: Check
    ) throws {
        let expect = expectation(of: truth)
        if expect == "signature_refused" {
            try compareRefusedSignature(truth, row, check)
            return
        }
        // A `not_due` row that no previous night verified (no `PriorRunSeeder` after the import) was due as
        // `unverified` in the first run, and one the sweep took was verified too: either holds Apple's decision
        // like any other.
        let firstDueReason: String? = try row.decode("first_due_reason")
        if expect == "not_due", firstDueReason != "unverified", firstDueReason != "sweep" {
            try compareNotDue(truth, row, check)
            return
        }
        if expect == "rejected" {
            try compareRejected(truth, row, check)
            return
        }
        try compareDecision(truth, row, runs: runs, check)
        if expect == "decision" { try compareCustomerFacts(truth, row, check) }
    }

    /// The record's `expect`; a record without one (older files) expects `rejected` for a non-0 status or
    /// another app's bundle id, else `decision`.
    private func expectation(of truth: [String: Any]) -> String {
        let appleStatus = (truth["apple_status"] as? NSNumber)?.intValue ?? -1
        return truth["expect"] as? String
            ?? (appleStatus != 0 || truth["bundle_id"] as? String != bundleId ? "rejected" : "decision")
    }

    /// `signature_refused`: the answer was refused as `signed_data_refused`, and the row keeps what it held
    /// before the run (`prior_run`, else what the app stored).
    private func compareRefusedSignature(_ truth: [String: Any], _ row: TruthComparisonRow, _ check: Check) throws {
        let lastError: String? = try row.decode("last_error")
        let verifyStatus: String? = try row.decode("last_verify_status")
        let refused = lastError?.hasPrefix(VerdictReason.Code.signedDataRefused.rawValue) == true
        check(
            "verification",
            VerdictReason.Code.signedDataRefused.rawValue,
            refused ? VerdictReason.Code.signedDataRefused.rawValue : lastError ?? verifyStatus ?? "never verified"
        )
        let prior = truth["prior_run"] as? [String: Any]
        check("state (untouched)", prior?["state"] as? String ?? "null", row.state ?? "null")
        check(
            "expires_at (untouched)",
            Self.normalise(prior?["expires_at"] as? String ?? truth["stored_expires_at"] as? String),
            Self.normalise(row.expiresAt)
        )
        check(
            "product_id (untouched)",
            prior?["product_id"] as? String ?? truth["stored_product_id"] as? String ?? "null",
            row.productId
        )
    }

    /// `not_due`, for a row a previous night verified: the run did not verify it, and it keeps the previous
    /// run's state, expiry and product.
    private func compareNotDue(_ truth: [String: Any], _ row: TruthComparisonRow, _ check: Check) throws {
        // Verified last night, expiry months away, no notifications read: the run leaves the row alone.
        let prior = truth["prior_run"] as? [String: Any]
        check("state (previous run's)", prior?["state"] as? String ?? "null", row.state ?? "null")
        check(
            "expires_at (previous run's)",
            Self.normalise(prior?["expires_at"] as? String),
            Self.normalise(row.expiresAt)
        )
        check("product_id (previous run's)", prior?["product_id"] as? String ?? "null", row.productId)
        let lastRun: Int64? = try row.decode("last_run")
        check("verified by the run", "no", lastRun == nil ? "no" : "yes")
    }

    /// `rejected`: the answer was refused (`rejected` or `invalid_receipt`) and the row is untouched: no state,
    /// the stored expiry and product.
    private func compareRejected(_ truth: [String: Any], _ row: TruthComparisonRow, _ check: Check) throws {
        let verifyStatus: String? = try row.decode("last_verify_status")
        let refused = verifyStatus == "rejected" || verifyStatus == "invalid_receipt"
        check("verification", "rejected", refused ? "rejected" : verifyStatus ?? "never verified")
        check("state (untouched)", "null", row.state ?? "null")
        if let stored = truth["stored_expires_at"] as? String {
            check("expires_at (untouched)", Self.normalise(stored), Self.normalise(row.expiresAt))
        }
        if let stored = truth["stored_product_id"] as? String {
            check("product_id (untouched)", stored, row.productId)
        }
    }

    /// Apple's decision (`decision`, `entitlement_ended`, and a `not_due` row the run verified): state, expiry,
    /// product, auto-renew status and product, grace expiry, the number of ledger transactions, and a recorded
    /// move backwards when Apple's expiry is earlier than the row's before the run.
    private func compareDecision(
        _ truth: [String: Any],
        _ row: TruthComparisonRow,
        runs: [Int64: RunClock],
        _ check: Check
    ) throws {
        check("state", truth["state"] as? String ?? "null", row.state ?? "null")
        let expectedLatest = try compareExpiry(truth, row, runs: runs, check)
        check("product_id", truth["product_id"] as? String ?? "null", row.productId)
        check(
            "auto_renew",
            (truth["auto_renew"] as? Bool).map { String($0) } ?? "null",
            (try row.decode("auto_renew", as: Bool?.self)).map { String($0) } ?? "null"
        )
        check(
            "auto_renew_product_id",
            truth["auto_renew_product_id"] as? String ?? "null",
            (try row.decode("auto_renew_product_id", as: String?.self)) ?? "null"
        )
        check(
            "grace_period_expires_at",
            Self.normalise(truth["grace_period_expires_at"] as? String),
            Self.normalise(try row.decode("grace_period_expires_at", as: Date?.self))
        )
        if let count = (truth["transaction_count"] as? NSNumber)?.intValue {
            check("ledger transactions", String(count), String(try row.decode("ledger_count", as: Int.self)))
        }
        // A move backwards (Apple's expiry earlier than the row's before the run) must be recorded.
        let prior = truth["prior_run"] as? [String: Any]
        let before = Self.date(prior?["expires_at"] as? String ?? truth["stored_expires_at"] as? String)
        if let before, let expectedLatest, Self.milliseconds(expectedLatest) < Self.milliseconds(before) {
            let moved: Bool = try row.decode("moved_backwards")
            check("expiry moved backwards (recorded by the run)", "true", String(moved))
        }
    }

    /// Checks the row's expiry against the record's: exact, or with `expires_at_rule` `not_after_run` between
    /// min(`expires_at`, the earliest and the latest clock of the run that finished the row). Returns the
    /// latest expiry the row may hold at the end.
    private func compareExpiry(
        _ truth: [String: Any],
        _ row: TruthComparisonRow,
        runs: [Int64: RunClock],
        _ check: Check
    ) throws -> Date? {
        var expectedLatest = Self.date(truth["expires_at"] as? String)
        guard truth["expires_at_rule"] as? String == "not_after_run" else {
            check("expires_at", Self.normalise(truth["expires_at"] as? String), Self.normalise(row.expiresAt))
            return expectedLatest
        }
        let lastRun: Int64? = try row.decode("last_run")
        if let limit = expectedLatest, let clock = lastRun.flatMap({ runs[$0] }) {
            let low = min(limit, clock.earliest)
            let high = min(limit, clock.latest)
            expectedLatest = high
            let actual = row.expiresAt.map(Self.milliseconds)
            let inRange = actual.map { Self.milliseconds(low) <= $0 && $0 <= Self.milliseconds(high) } ?? false
            let wanted =
                Self.milliseconds(low) == Self.milliseconds(high)
                ? Self.normalise(low) : "between \(Self.normalise(low)) and \(Self.normalise(high))"
            check("expires_at (not after the run)", wanted, inRange ? wanted : Self.normalise(row.expiresAt))
        } else {
            check("expires_at (not after the run)", "a run that finished this row", "none")
        }
        return expectedLatest
    }

    /// What the row keeps beside the entitlement (docs/decision-rules.md, "What the row keeps beside the
    /// entitlement"), against the renewal info the simulator signs, for a truth that states it: the app's account
    /// token with either source (the import and verifyReceipt's `app_account_token` set it), the rest only from the
    /// App Store Server API, the one source that carries them.
    private func compareCustomerFacts(_ truth: [String: Any], _ row: TruthComparisonRow, _ check: Check) throws {
        if truth.keys.contains("app_account_token") {
            check(
                "app_account_token",
                TruthText.of(truth["app_account_token"]),
                TruthText.of(try row.decode("app_account_token", as: String?.self))
            )
        }
        guard serverAPI else { return }
        let texts = ["app_transaction_id", "renewal_currency", "renewal_billing_plan_type"]
        for key in texts where truth.keys.contains(key) {
            check(key, TruthText.of(truth[key]), TruthText.of(try row.decode(key, as: String?.self)))
        }
        let integers = [
            ("expiration_intent", "expiration_intent"), ("price_increase_status", "price_increase_status"),
            ("renewal_price", "renewal_price_milliunits"),
        ]
        for (key, column) in integers where truth.keys.contains(key) {
            check(
                key,
                TruthText.of(truth[key]),
                TruthText.of(try row.decode(column, as: Int64?.self).map { NSNumber(value: $0) })
            )
        }
    }

    private func record(_ mismatch: Mismatch, into report: inout Report) {
        report.mismatchCount += 1
        if report.mismatches.count < detailLimit { report.mismatches.append(mismatch) }
    }

    static func date(_ text: String?) -> Date? { text.flatMap(RFC3339.parse) }

    static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }

    /// Millisecond precision, UTC (the truth file's precision).
    static func normalise(_ text: String?) -> String {
        guard let text, let date = RFC3339.parse(text) else { return text ?? "null" }
        return normalise(date)
    }

    static func normalise(_ date: Date?) -> String {
        guard let date else { return "null" }
        return RFC3339.string(Date(timeIntervalSince1970: (date.timeIntervalSince1970 * 1000).rounded() / 1000))
    }
}

extension TruthComparison {
    /// The ids listed in the simulator's `server-api/signature-faults.jsonl` at `path`; empty when there is no
    /// such file (no subscription was forged).
    public static func forgedSubscriptions(file path: String) throws -> Set<String> {
        guard FileManager.default.fileExists(atPath: path) else { return [] }
        guard let data = FileManager.default.contents(atPath: path) else { throw UsageError("cannot read \(path)") }
        var ids: Set<String> = []
        for (number, line) in data.split(separator: UInt8(ascii: "\n")).enumerated() where !line.isEmpty {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
                let id = object["original_transaction_id"] as? String
            else { throw UsageError("\(path): line \(number + 1) is not a signature-fault record") }
            ids.insert(id)
        }
        return ids
    }
}
