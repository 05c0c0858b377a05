import CivilTime
import Foundation
import Postgres
import Reconciler

/// Compares what the run read of Apple's notification history with the simulator's `notifications-truth.json`
/// (docs/simulator.md, "2026 shapes"): every notification type and subtype served for the window stored as many
/// times, each refund request of the window reported with the outcome the simulator gave it, and each mass
/// extension's summary stored with its product. An undocumented type counts like any other: stored, never refused.
public struct NotificationComparison {
    public struct Report: Sendable {
        /// Per `TYPE` and `TYPE/SUBTYPE`: (the simulator's count, stored).
        public var counts: [String: (expected: Int, found: Int)] = [:]
        /// Refund requests of the window: (transaction id, the simulator's outcome, the report's or "missing").
        public var refundRequests: [(transactionId: String, expected: String, found: String)] = []
        /// Mass extensions: (request id, product, whether its summary is stored with that product).
        public var massExtensions: [(request: String, productId: String, stored: Bool)] = []

        public var matches: Bool {
            counts.values.allSatisfy { $0.expected == $0.found }
                && refundRequests.allSatisfy { $0.expected == $0.found } && massExtensions.allSatisfy(\.stored)
                && !counts.isEmpty
        }

        public func lines(limit: Int = 10) -> [String] {
            let types = counts.filter { !$0.key.contains("/") }
            let stored = types.values.map(\.found).reduce(0, +)
            var lines = [
                "notifications vs notifications-truth.json: \(stored) stored in \(types.count) types, "
                    + "\(counts.filter { $0.value.expected == $0.value.found }.count)/\(counts.count) type and subtype "
                    + "counts match; refund requests \(refundRequests.filter { $0.expected == $0.found }.count)/"
                    + "\(refundRequests.count) with the simulator's outcome; mass extensions "
                    + "\(massExtensions.filter(\.stored).count)/\(massExtensions.count) stored"
            ]
            for (key, pair) in counts.sorted(by: { $0.key < $1.key }) where pair.expected != pair.found {
                lines.append("  \(key): expected \(pair.expected), stored \(pair.found)")
            }
            for request in refundRequests.filter({ $0.expected != $0.found }).prefix(limit) {
                lines.append(
                    "  refund request \(request.transactionId): expected \(request.expected), found \(request.found)"
                )
            }
            return lines
        }
    }

    let connection: PostgresConnection

    public init(connection: PostgresConnection) {
        self.connection = connection
    }

    /// Compares with `file` (the export's `notifications-truth.json`) and the report of run `runId`.
    public func compare(file: String, runId: Int64) throws -> Report {
        guard let data = FileManager.default.contents(atPath: file),
            let truth = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let counts = truth["counts"] as? [String: NSNumber],
            let environment = truth["environment"] as? String,
            let start = (truth["start"] as? String).flatMap(RFC3339.parse),
            let end = (truth["end"] as? String).flatMap(RFC3339.parse)
        else { throw UsageError("\(file): not the simulator's notifications-truth.json") }
        var report = Report()
        let stored = try storedCounts(environment: environment)
        for key in Set(counts.keys).union(stored.keys) {
            report.counts[key] = (counts[key]?.intValue ?? 0, stored[key] ?? 0)
        }
        let summary = try ReportGenerator(connection: connection).summary(runId: runId).summary
        let found = Dictionary(
            (summary.notifications?.refundRequests ?? []).map { ($0.transactionId, $0.outcome.rawValue) },
            uniquingKeysWith: { first, _ in first }
        )
        for request in truth["refund_requests"] as? [[String: Any]] ?? [] {
            guard let id = request["transaction_id"] as? String,
                let at = (request["requested_at"] as? String).flatMap(RFC3339.parse), at >= start, at < end
            else { continue }
            report.refundRequests.append((id, request["outcome"] as? String ?? "?", found[id] ?? "missing"))
        }
        for mass in truth["mass_extensions"] as? [[String: Any]] ?? [] {
            let product = mass["product_id"] as? String ?? ""
            let isStored =
                try connection.queryFirst(
                    """
                    SELECT 1 AS one FROM app_store_notifications
                     WHERE notification_type = 'RENEWAL_EXTENSION' AND subtype = 'SUMMARY' AND product_id = $1
                    """,
                    [product]
                ) != nil
            report.massExtensions.append((mass["request_identifier"] as? String ?? "?", product, isStored))
        }
        return report
    }

    /// Stored notifications of `environment` per `TYPE` and per `TYPE/SUBTYPE`.
    private func storedCounts(environment: String) throws -> [String: Int] {
        var counts: [String: Int] = [:]
        let rows = try connection.query(
            """
            SELECT notification_type, subtype, count(*)::bigint AS n FROM app_store_notifications
             WHERE environment = $1 GROUP BY notification_type, subtype
            """,
            [environment]
        )
        for row in rows {
            let type: String = try row.decode("notification_type")
            let n = Int(try row.decode("n", as: Int64.self))
            counts[type, default: 0] += n
            if let subtype = try row.decode("subtype", as: String?.self) {
                counts["\(type)/\(subtype)", default: 0] += n
            }
        }
        return counts
    }
}
