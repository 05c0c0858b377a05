import Foundation
import Postgres

/// Builds a run's report folder `<report-dir>/<YYYY-MM-DD>_run-<id>/` from the database alone and
/// writes it atomically (`ReportFolderWriter`). Used after every run and by `renewal-reconciler report RUN_ID`.
///
/// Memory stays flat whatever the run's size: items and transactions are streamed from PostgreSQL
/// (single-row mode) in sequential passes of one repeatable-read snapshot; each row is written to its
/// CSV file and folded into the summary's counts, and only the first rows of each table (the ones
/// report.html shows) are kept.
public struct ReportGenerator {
    public let connection: PostgresConnection
    /// How money is estimated (and converted): the report command's flags.
    public var moneyOptions: ReportMoneyOptions

    public init(connection: PostgresConnection, moneyOptions: ReportMoneyOptions = ReportMoneyOptions()) {
        self.connection = connection
        self.moneyOptions = moneyOptions
    }

    /// Streams run `runId` into its report folder; with `metricsFile`, also writes the Prometheus
    /// metrics from the same snapshot (even when the folder cannot be written). Returns the folder's URL.
    /// - Throws: `ReportError`: run not found, database failure, or a report directory (or metrics
    ///   file) that is not writable or full (the message names the path; the database is untouched,
    ///   regenerate later). A folder error is thrown in preference to a metrics error.
    @discardableResult
    public func generate(
        runId: Int64,
        reportDirectory: String,
        metricsFile: String? = nil
    ) throws(ReportError)
        -> URL
    {
        var folderError: ReportError?
        var folder: String?
        var summarized: (run: ReportRun, summary: RunSummary)?
        do {
            try connection.transaction { db in
                let (run, schema) = try ReportLoader.beginSnapshot(db, runId: runId)
                let prices = try ReportLoader.prices(db, schema: schema)
                do {
                    folder = try ReportFolderWriter(reportDirectory: reportDirectory).write(folderName: run.folderName)
                    {
                        let summary = try Self.writeFiles(
                            db,
                            run: run,
                            schema: schema,
                            prices: prices,
                            moneyOptions: moneyOptions,
                            into: $0
                        )
                        summarized = (run, summary)
                    }
                } catch let error as ReportError where error.code != .runNotFound && metricsFile != nil {
                    folderError = error
                    summarized = (
                        run,
                        try Self.summarize(db, run: run, schema: schema, prices: prices, moneyOptions: moneyOptions)
                    )
                }
            }
        } catch let error as ReportError {
            throw error
        } catch {
            throw ReportError(.database, "reading run \(runId): \(error)")
        }
        if let metricsFile, let summarized {
            do throws(ReportError) {
                try MetricsFile.write(run: summarized.run, summary: summarized.summary, to: metricsFile)
            } catch {
                folderError = folderError ?? error
            }
        }
        if let folderError { throw folderError }
        guard let folder else { throw ReportError(.database, "reading run \(runId): no report written") }
        return URL(fileURLWithPath: folder, isDirectory: true)
    }

    /// Writes the folder of already loaded `data` (in memory; for small runs and tests).
    @discardableResult
    public static func write(_ data: ReportData, reportDirectory: String) throws(ReportError) -> URL {
        let files = try ReportFiles.render(data)
        let path = try ReportFolderWriter(reportDirectory: reportDirectory).write(
            folderName: data.run.folderName,
            files: files
        )
        return URL(fileURLWithPath: path, isDirectory: true)
    }

    /// Streams run `runId`'s summary and writes its Prometheus metrics to `metricsFile` (atomically; the
    /// last success time is kept from the old file when this run did not succeed).
    public func writeMetrics(runId: Int64, metricsFile: String) throws(ReportError) {
        let (run, summary) = try summary(runId: runId)
        try MetricsFile.write(run: run, summary: summary, to: metricsFile)
    }

    /// Run `runId` and its summary, streamed from one snapshot without writing any file.
    public func summary(runId: Int64) throws(ReportError) -> (run: ReportRun, summary: RunSummary) {
        do {
            return try connection.transaction { db in
                let (run, schema) = try ReportLoader.beginSnapshot(db, runId: runId)
                let prices = try ReportLoader.prices(db, schema: schema)
                return (
                    run, try Self.summarize(db, run: run, schema: schema, prices: prices, moneyOptions: moneyOptions)
                )
            }
        } catch let error as ReportError {
            throw error
        } catch {
            throw ReportError(.database, "reading run \(runId): \(error)")
        }
    }

    /// `moneyOptions` with Apple's measured proceeds rates up to the run's as-of (docs/reports.md, "Calibrated
    /// proceeds"), read in the report's snapshot; unchanged with a configured `--commission-rate`.
    static func calibrated(
        _ moneyOptions: ReportMoneyOptions,
        _ db: PostgresConnection,
        run: ReportRun
    ) throws -> ReportMoneyOptions {
        guard !moneyOptions.commission.isConfigured else { return moneyOptions }
        var options = moneyOptions
        options.calibration = try ProceedsCalibration.load(db, through: run.asOf)
        return options
    }

    // MARK: Passes

    static func summarize(
        _ db: PostgresConnection,
        run: ReportRun,
        schema: ReportSchema,
        prices: [ProductPrice],
        moneyOptions: ReportMoneyOptions
    ) throws
        -> RunSummary
    {
        let moneyOptions = try calibrated(moneyOptions, db, run: run)
        var accumulator = RunSummaryAccumulator(moneyOptions: moneyOptions, prices: prices)
        try ReportLoader.forEachItem(db, runId: run.id, schema: schema) { accumulator.add($0) }
        try ReportLoader.forEachTransaction(db, run: run, schema: schema) { accumulator.add($0) }
        let notifications = try ReportLoader.notifications(db, runId: run.id, schema: schema)
        return RunSummary(run: run, accumulator: accumulator, prices: prices, notifications: notifications)
    }

    /// Two passes (items, then transactions) writing the CSVs row by row into `directory`, then
    /// summary.json, money.csv and report.html from the folded counts and the kept first rows.
    static func writeFiles(
        _ db: PostgresConnection,
        run: ReportRun,
        schema: ReportSchema,
        prices: [ProductPrice],
        moneyOptions: ReportMoneyOptions,
        into directory: String
    ) throws -> RunSummary {
        let moneyOptions = try calibrated(moneyOptions, db, run: run)
        var accumulator = RunSummaryAccumulator(moneyOptions: moneyOptions, prices: prices)
        let changes = try ReportCSVFile(
            path: "\(directory)/changes.csv",
            ReportTables.changeColumns,
            numeric: ReportTables.changeNumericColumns
        )
        let errors = try ReportCSVFile(
            path: "\(directory)/errors.csv",
            ReportTables.errorColumns,
            numeric: ReportTables.errorNumericColumns
        )
        var backwards = ReportRowSample()
        try ReportLoader.forEachItem(db, runId: run.id, schema: schema) { item in
            accumulator.add(item)
            if item.isChange { try changes.add(ReportTables.changeRow(item)) }
            if item.isBackwardsMove { backwards.add(ReportTables.backwardsRow(item)) }
            if item.isError { try errors.add(ReportTables.errorRow(item)) }
        }
        try changes.close()
        try errors.close()
        let transactions = try ReportCSVFile(
            path: "\(directory)/transactions.csv",
            ReportTables.transactionColumns,
            numeric: ReportTables.transactionNumericColumns
        )
        try ReportLoader.forEachTransaction(db, run: run, schema: schema) { transaction in
            accumulator.add(transaction)
            try transactions.add(ReportTables.transactionRow(transaction))
        }
        try transactions.close()

        let notifications = try ReportLoader.notifications(db, runId: run.id, schema: schema)
        let summary = RunSummary(run: run, accumulator: accumulator, prices: prices, notifications: notifications)
        let json: Data
        do {
            json = try summary.jsonData()
        } catch {
            throw ReportError(.encoding, path: run.folderName, "cannot encode the summary of run \(run.id): \(error)")
        }
        try AtomicFiles.writeNewFile("\(directory)/summary.json", json)
        try AtomicFiles.writeNewFile("\(directory)/money.csv", try ReportFiles.moneyCSV(summary.money))
        try AtomicFiles.writeNewFile(
            "\(directory)/money-storefronts.csv",
            try ReportFiles.storefrontMoneyCSV(summary.money)
        )
        let html = ReportHTML.render(
            summary: summary,
            changes: changes.sample,
            backwards: backwards,
            errors: errors.sample,
            transactions: transactions.sample
        )
        try AtomicFiles.writeNewFile("\(directory)/report.html", Data(html.utf8))
        return summary
    }
}
