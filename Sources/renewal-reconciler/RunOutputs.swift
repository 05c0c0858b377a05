import Foundation
import Logging
import Postgres
import Reconciler

/// Writes the run's report folder and metrics file, both built from the database only (so
/// `renewal-reconciler report RUN_ID` can always regenerate them). A report that cannot be written
/// (directory not writable, disk full) is an error naming the path; the run's data is already safe.
@discardableResult
func writeRunOutputs(
    summary: ReconciliationRunner.Summary, connectionString: String, reportDir: String, metricsFile: String?,
    logger: Logger
) throws -> String? {
    let conn = try PostgresConnection(connectionString)
    defer { conn.close() }
    // Streamed from one snapshot in constant memory; the metrics file is written even when the folder is not.
    var reportError: ReportError?
    var folder: String?
    do {
        folder = try ReportGenerator(connection: conn).generate(
            runId: summary.runId, reportDirectory: reportDir, metricsFile: metricsFile
        ).path
        logger.info("run \(summary.runId) report: \(folder ?? "")")
    } catch {
        reportError = error
        logger.error("run \(summary.runId): \(error)")
    }
    if let reportError { throw reportError }
    return folder
}

extension ReportError: ExitCodeProviding {
    public var exitCode: ReconcilerExitCode {
        if case .runNotFound = code { return .usage }
        return .failure
    }
}
