import Foundation
import Postgres

/// Builds a run's report folder `<report-dir>/<YYYY-MM-DD>_run-<id>/` from the database alone and
/// writes it atomically (`ReportFolderWriter`). Used after every run and by `renewal-reconciler report RUN_ID`.
public struct ReportGenerator {
    public let connection: PostgresConnection

    public init(connection: PostgresConnection) {
        self.connection = connection
    }

    /// Loads run `runId`, renders every file and writes the folder; returns the folder's URL.
    /// - Throws: `ReportError`: run not found, database failure, or a report directory that is not
    ///   writable or full (the message names the path; the database is untouched, regenerate later).
    @discardableResult
    public func generate(runId: Int64, reportDirectory: String) throws(ReportError) -> URL {
        let data = try ReportLoader(connection: connection).load(runId: runId)
        return try Self.write(data, reportDirectory: reportDirectory)
    }

    /// Writes the folder of already loaded `data` (lets a caller also write the metrics file from the same snapshot).
    @discardableResult
    public static func write(_ data: ReportData, reportDirectory: String) throws(ReportError) -> URL {
        let files = try ReportFiles.render(data)
        let path = try ReportFolderWriter(reportDirectory: reportDirectory).write(
            folderName: data.run.folderName, files: files)
        return URL(fileURLWithPath: path, isDirectory: true)
    }

    /// Loads run `runId` and writes its Prometheus metrics to `metricsFile` (atomically; the last success
    /// time is kept from the old file when this run did not succeed).
    public func writeMetrics(runId: Int64, metricsFile: String) throws(ReportError) {
        try MetricsFile.write(data: ReportLoader(connection: connection).load(runId: runId), to: metricsFile)
    }
}
