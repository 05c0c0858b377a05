import Foundation
import Postgres

/// A run's row as a process takes the run up (resumes it, joins it as a worker, or finds it completed): what the
/// run was started with (`RunRecords`, `WorkerRecords`).
struct StoredRun: Sendable {
    let id: Int64
    /// `reconciliation_runs.status` as stored (`RunStatus`'s raw value).
    let status: String
    /// The parameters the run was first started with, as stored (JSON): a resumed or joined run goes on with them,
    /// not today's.
    let parametersJSON: String
    let asOf: Date
    let startedAt: Date

    init(row: PostgresRow) throws {
        id = try row.decode("id")
        status = try row.decode("status")
        parametersJSON = try row.decode("parameters")
        asOf = try row.decode("as_of")
        startedAt = try row.decode("started_at")
    }

    /// The columns every query that returns a `StoredRun` selects from `reconciliation_runs`.
    static let columns = "id, status, parameters::text AS parameters, as_of, started_at"

    /// The parameters the run was first started with, decoded only when the run is taken up.
    func parameters() throws -> RunParameters {
        try RunParameters.decode(parametersJSON)
    }
}
