import CivilTime
import Foundation
import Postgres

/// `renewal-reconciler runs`: the most recent runs with their status and headline counts, as rows and
/// as a fixed-width text table.
public struct RunListing {
    /// One run's line.
    public struct Row: Sendable, Equatable {
        public var id: Int64
        public var mode: String
        public var dryRun: Bool
        public var status: String
        public var asOf: Date
        public var startedAt: Date
        public var finishedAt: Date?
        public var dueCount: Int
        public var doneCount: Int
        public var unresolvedCount: Int
        /// Items per outcome (pending items as `pending`).
        public var outcomes: [String: Int]
        public var exitCode: Int?

        public var durationSeconds: Double? { finishedAt.map { max(0, $0.timeIntervalSince(startedAt)) } }
    }

    public let connection: PostgresConnection

    public init(connection: PostgresConnection) {
        self.connection = connection
    }

    /// The `limit` most recent runs, newest first.
    /// - Throws: `ReportError` (`.database`).
    public func recent(limit: Int = 20) throws(ReportError) -> [Row] {
        do {
            return try connection.query(Self.sql, [max(1, limit)]).map { row in
                Row(
                    id: try row.decode("id"),
                    mode: try row.decode("mode"),
                    dryRun: try row.decode("dry_run"),
                    status: try row.decode("status"),
                    asOf: try row.decode("as_of"),
                    startedAt: try row.decode("started_at"),
                    finishedAt: try row.decode("finished_at"),
                    dueCount: try row.decode("due_count"),
                    doneCount: try row.decode("done_count"),
                    unresolvedCount: try row.decode("unresolved_count"),
                    outcomes: Self.outcomes(try row.decode("outcomes", as: String?.self)),
                    exitCode: try row.decode("exit_code")
                )
            }
        } catch {
            throw ReportError(.database, "listing runs: \(error)")
        }
    }

    /// A text table: one line per run (id, mode, status, as-of, duration, due, done, renewed, lapsed,
    /// unresolved, exit code), newest first.
    public static func format(_ rows: [Row]) -> String {
        let header = [
            "RUN", "MODE", "STATUS", "AS OF (UTC)", "DURATION", "DUE", "DONE", "RENEWED", "LAPSED",
            "UNRESOLVED", "EXIT",
        ]
        let lines = rows.map { row -> [String] in
            [
                String(row.id), row.mode + (row.dryRun ? " (dry)" : ""), row.status, RFC3339.string(row.asOf),
                row.durationSeconds.map { ReportHTML.formatSeconds($0) } ?? "-", String(row.dueCount),
                String(row.doneCount), String(row.outcomes["renewed"] ?? 0), String(row.outcomes["lapsed"] ?? 0),
                String(row.unresolvedCount), row.exitCode.map(String.init) ?? "-",
            ]
        }
        let all = [header] + lines
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        let rightAligned: Set<Int> = [0, 5, 6, 7, 8, 9, 10]
        var out = ""
        for line in all {
            let cells = line.enumerated().map { index, cell in
                let pad = String(repeating: " ", count: widths[index] - cell.count)
                return rightAligned.contains(index) ? pad + cell : cell + pad
            }
            out += cells.joined(separator: "  ").trimmingCharacters(in: .whitespaces) + "\n"
        }
        if rows.isEmpty { out += "(no runs yet)\n" }
        return out
    }

    static func outcomes(_ json: String?) -> [String: Int] {
        guard let json, let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] else {
            return [:]
        }
        var result: [String: Int] = [:]
        for (key, value) in object { if let count = value as? NSNumber { result[key] = count.intValue } }
        return result
    }

    static let sql = """
        SELECT r.id, r.mode, r.dry_run, r.status, r.as_of, r.started_at, r.finished_at, r.due_count, r.done_count,
               r.unresolved_count, r.exit_code,
               (SELECT jsonb_object_agg(o.outcome, o.n)::text FROM (
                    SELECT COALESCE(i.outcome, 'pending') AS outcome, count(*) AS n
                      FROM reconciliation_items i WHERE i.run_id = r.id GROUP BY 1) o) AS outcomes
          FROM reconciliation_runs r
         ORDER BY r.id DESC
         LIMIT $1
        """
}
