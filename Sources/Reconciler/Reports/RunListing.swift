import CivilTime
import Foundation
import Postgres

/// `renewal-reconciler runs`: the most recent runs with their status and headline counts, as rows and
/// as a fixed-width text table.
public struct RunListing {
    /// One run's line: the run as the reports read it, and its items per outcome (pending items as `pending`).
    public struct Row: Sendable, Equatable {
        public var run: ReportRun
        public var outcomes: [String: Int]

        /// The run's id (`reconciliation_runs.id`).
        public var id: Int64 { run.id }
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
                    run: try ReportLoader.run(row),
                    outcomes: Self.outcomes(try row.decode("outcomes", as: String?.self))
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
            let run = row.run
            return [
                String(run.id), run.mode + (run.dryRun ? " (dry)" : ""),
                run.status + (run.itemsPrunedAt == nil ? "" : " (items pruned)"), RFC3339.string(run.asOf),
                run.durationSeconds.map { ReportHTML.formatSeconds($0) } ?? "-", String(run.dueCount),
                String(run.doneCount), String(row.outcomes["renewed"] ?? 0), String(row.outcomes["lapsed"] ?? 0),
                String(run.unresolvedCount), run.exitCode.map(String.init) ?? "-",
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

    /// The runs newest first, as `ReportLoader` reads a run, with their items per outcome.
    static let sql = """
        SELECT run.*,
               (SELECT jsonb_object_agg(o.outcome, o.n)::text FROM (
                    SELECT COALESCE(i.outcome, 'pending') AS outcome, count(*) AS n
                      FROM reconciliation_items i WHERE i.run_id = run.id GROUP BY 1) o) AS outcomes
          FROM (\(ReportLoader.runsSQL("ORDER BY r.id DESC LIMIT $1"))) run
         ORDER BY run.id DESC
        """
}
