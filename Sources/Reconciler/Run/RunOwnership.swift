import Postgres

/// What a one-process run holds of its run row while it works it (docs/architecture.md, "The run lock"): the
/// `resume_count` it took the run with, which fences every batch and the finish, and the requests to Apple the
/// run's earlier sessions counted, which each batch adds to (docs/architecture.md, "Requests counted with each
/// batch").
struct RunOwnership: Sendable {
    let resumeCount: Int64
    let statsBase: AppleRequestStats

    /// Read right after the run was created or resumed, while this process holds the run lock.
    static func read(runId: Int64, _ conn: PostgresConnection) throws -> RunOwnership {
        let row = try conn.queryFirst(
            "SELECT resume_count, apple_stats::text AS stats FROM reconciliation_runs WHERE id = $1",
            [runId]
        )
        return RunOwnership(
            resumeCount: try row?.decode("resume_count", as: Int64.self) ?? 0,
            statsBase: AppleRequestStats.fromJSON(try row?.decode("stats", as: String?.self))
        )
    }
}
