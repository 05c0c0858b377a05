import Foundation
import Postgres

/// A run's row as a process takes the run up (resumes it, joins it as a worker, or finds it completed): what the
/// run was started with (`RunRecords`, `WorkerRecords`).
struct StoredRun: Sendable {
    let id: Int64
    let status: RunStatus
    /// The parameters the run was first started with, as stored (JSON): a resumed or joined run goes on with them,
    /// not today's.
    let parametersJSON: String
    let asOf: Date
    let startedAt: Date

    init(row: PostgresRow) throws {
        id = try row.decode("id")
        let storedStatus: String = try row.decode("status")
        guard let known = RunStatus(rawValue: storedStatus) else {
            throw UnknownStoredValueError(column: "reconciliation_runs.status", value: storedStatus)
        }
        status = known
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
