import Foundation
import Logging
import Reconciler

/// Writes the run's report folder and metrics file (reports are built from the database only).
@discardableResult
func writeRunOutputs(
    summary: ReconciliationRunner.Summary, connectionString: String, reportDir: String, metricsFile: String?,
    logger: Logger
) throws -> String? {
    // Filled in when the report generator lands (issue 6).
    _ = (summary, connectionString, reportDir, metricsFile, logger)
    return nil
}
