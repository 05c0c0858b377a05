import Foundation
import Logging
import Postgres

/// Writes a finished run's report folder, the trends files beside it, and the metrics file, both built from the database only (so
/// `renewal-reconciler report RUN_ID` can always regenerate them). A report that cannot be written
/// (directory not writable, disk full) is an error naming the path; the run's data is already safe.
struct RunReportWriter {
    let connectionString: String
    let logger: Logger
    var moneyOptions = ReportMoneyOptions()

    /// Returns the report folder's path (nil when only metrics were asked for).
    /// - Throws: `RunReportFailedError` (the run is then recorded failed), or a database error before any file.
    func write(runId: Int64, reportDirectory: String?, metricsFile: String?) throws -> String? {
        let connection = try DatabaseRetry.standard.connect(connectionString)
        defer { connection.close() }
        let generator = ReportGenerator(connection: connection, moneyOptions: moneyOptions)
        do {
            guard let reportDirectory else {
                if let metricsFile { try generator.writeMetrics(runId: runId, metricsFile: metricsFile) }
                return nil
            }
            // Streamed from one snapshot in constant memory; the metrics file is written even when the
            // folder is not.
            let folder = try generator.generate(
                runId: runId,
                reportDirectory: reportDirectory,
                metricsFile: metricsFile
            )
            logger.info("run \(runId) report: \(folder.path)")
            // The trends across nights beside the run folders (docs/reports.md, "Trends across nights").
            let trendRows = try TrendsReport(connection: connection).write(directory: reportDirectory)
            logger.info("trends: \(reportDirectory)/\(TrendsReport.htmlName) (\(trendRows) rows)")
            return folder.path
        } catch {
            let failure = RunReportFailedError(runId: runId, reason: "\(error)")
            recordFailure(failure, connection: connection, metricsFile: metricsFile)
            throw failure
        }
    }

    /// A run whose report could not be written did not do its job: its row says `failed` (exit 1, the reason; `run
    /// --resume` finishes it again and writes the report), and the metrics file, when it can be written, says so
    /// too (docs/operations.md, "Reports that cannot be written").
    private func recordFailure(_ failure: RunReportFailedError, connection: PostgresConnection, metricsFile: String?) {
        let runId = failure.runId
        logger.error("\(failure)")
        let message = "\(failure)"
        do {
            try RunRecords(connection: connection).failReport(runId: runId, exitCode: .failure, error: message)
        } catch {
            logger.error("run \(runId): could not record the report's failure: \(error)")
        }
        guard let metricsFile else { return }
        do throws(ReportError) {
            try ReportGenerator(connection: connection, moneyOptions: moneyOptions).writeMetrics(
                runId: runId,
                metricsFile: metricsFile
            )
        } catch {
            logger.error("run \(runId): \(error)")
        }
    }
}
