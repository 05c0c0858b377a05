import CivilTime
import Foundation
import Postgres

/// Compares the database with the simulator's truth file (`truth.jsonl`): for each
/// original_transaction_id, the state, expiry, product, auto-renew status and product, grace expiry and
/// the number of ledger transactions Apple implies; receipts Apple refuses (or of another app) must
/// have been rejected without touching entitlement. The demo exits 0 only on a 100% match.
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

    public let connection: PostgresConnection
    public let bundleId: String
    /// Keep at most this many mismatch details (all are counted).
    public var detailLimit = 50

    public init(connection: PostgresConnection, bundleId: String) {
        self.connection = connection
        self.bundleId = bundleId
    }

    public func compare(truthFile path: String) throws -> Report {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw UsageError("cannot read truth file \(path)")
        }
        var report = Report()
        var batch: [[String: Any]] = []
        var lineNumber = 0
        for line in data.split(separator: UInt8(ascii: "\n")) where !line.isEmpty {
            lineNumber += 1
            guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
                object["original_transaction_id"] is String
            else {
                throw UsageError("\(path): line \(lineNumber) is not a truth record")
            }
            batch.append(object)
            if batch.count == 1000 {
                try compareBatch(batch, into: &report)
                batch.removeAll(keepingCapacity: true)
            }
        }
        if !batch.isEmpty { try compareBatch(batch, into: &report) }
        return report
    }

    private func compareBatch(_ truths: [[String: Any]], into report: inout Report) throws {
        let ids = truths.compactMap { $0["original_transaction_id"] as? String }
        let rows = try connection.query(
            """
            SELECT s.original_transaction_id, s.state, s.expires_at, s.product_id, s.auto_renew,
                   s.auto_renew_product_id, s.grace_period_expires_at, s.last_verify_status,
                   (SELECT count(*) FROM subscription_transactions t
                     WHERE t.original_transaction_id = s.original_transaction_id) AS ledger_count
              FROM subscriptions s WHERE s.original_transaction_id = ANY($1::text[])
            """, [ids.map { Optional($0) }])
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
                record(Mismatch(originalTransactionId: otid, scenario: scenario, field: "row", expected: "present", actual: "missing"), into: &report)
                continue
            }
            var problems: [Mismatch] = []
            func check(_ field: String, _ expected: String, _ actual: String) {
                if expected != actual {
                    problems.append(Mismatch(originalTransactionId: otid, scenario: scenario, field: field, expected: expected, actual: actual))
                }
            }
            let appleStatus = (truth["apple_status"] as? NSNumber)?.intValue ?? -1
            let truthBundle = truth["bundle_id"] as? String
            let verifyStatus: String? = try row.decode("last_verify_status")
            if appleStatus != 0 || truthBundle != bundleId {
                let refused = verifyStatus == "rejected" || verifyStatus == "invalid_receipt"
                check("verification", "rejected", refused ? "rejected" : verifyStatus ?? "never verified")
                check("state (untouched)", "null", (try row.decode("state", as: String?.self)) ?? "null")
            } else {
                check("state", truth["state"] as? String ?? "null", (try row.decode("state", as: String?.self)) ?? "null")
                check("expires_at", Self.normalise(truth["expires_at"] as? String), Self.normalise(try row.decode("expires_at", as: Date?.self)))
                check("product_id", truth["product_id"] as? String ?? "null", try row.decode("product_id", as: String.self))
                check("auto_renew", (truth["auto_renew"] as? Bool).map { String($0) } ?? "null", (try row.decode("auto_renew", as: Bool?.self)).map { String($0) } ?? "null")
                check("auto_renew_product_id", truth["auto_renew_product_id"] as? String ?? "null", (try row.decode("auto_renew_product_id", as: String?.self)) ?? "null")
                check("grace_period_expires_at", Self.normalise(truth["grace_period_expires_at"] as? String), Self.normalise(try row.decode("grace_period_expires_at", as: Date?.self)))
                if let count = (truth["transaction_count"] as? NSNumber)?.intValue {
                    check("ledger transactions", String(count), String(try row.decode("ledger_count", as: Int.self)))
                }
            }
            if problems.isEmpty {
                report.matched += 1
                entry.matched += 1
            } else {
                for p in problems { record(p, into: &report) }
            }
        }
    }

    private func record(_ mismatch: Mismatch, into report: inout Report) {
        report.mismatchCount += 1
        if report.mismatches.count < detailLimit { report.mismatches.append(mismatch) }
    }

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
