import AppleReports
import ArgumentParser
import CivilTime
import Foundation
import Postgres
import Reconciler

/// `apple-reports import FILE...`: each App Store Connect report file checked and stored whole, once.
struct AppleReportsImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract:
            "Load App Store Connect report files (Subscriber, Subscription, Financial reports) into the database.",
        discussion: """
            Give it the report files as you downloaded them from App Store Connect, as many as you like, \
            gzip (.gz) or not: the Subscriber, Subscription Event and Subscription reports (Sales and Trends, \
            daily) and the Financial reports (Payments and Financial Reports, the consolidated report and the \
            detailed one). \
            The command sees which report a file is from its header line (the column names), not from its name; \
            a file that is none of these is refused and named.

            Each file is loaded whole or not at all: one bad row (a missing value, an amount, date or currency \
            that does not read) loads nothing of that file, and the message names the file, the line and the \
            column to look at. The other files still load. A file loaded before (the same content, even \
            renamed or compressed differently) is reported as already imported and loads nothing again, so \
            running the command twice on the same folder is safe.

            The Subscription report has no date column: its day is read from Apple's file name \
            (Subscription_<vendor>_<YYYYMMDD>.txt or .txt.gz); a file renamed otherwise needs --date. A \
            Subscription or Subscription Event report of a day already loaded loads nothing again.

            Amounts are stored exactly (to a thousandth of the currency) with their currency; a refund is a \
            negative customer price and units (Subscriber report) or an R row with a negative quantity \
            (Financial reports). Sales and Trends days are Pacific time; Financial reports cover an Apple \
            fiscal month.

            Exit status: 0 every file loaded or already loaded; 64 a file was refused (nothing of it loaded, \
            the others were); 1 the database failed.
            """
    )

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var logging: LoggingOptions

    @Option(
        help: ArgumentHelp(
            "Your vendor number in App Store Connect, kept with each file (the files do not state it).",
            valueName: "number"
        )
    )
    var vendorNumber: String?

    @Option(
        help: ArgumentHelp(
            "The Pacific day (YYYY-MM-DD) of the Subscription reports given, when their file names do not say it.",
            valueName: "day"
        )
    )
    var date: String?

    @Argument(help: ArgumentHelp("The report files (.txt, .tsv or .gz).", valueName: "file"))
    var files: [String]

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("name at least one report file") }
        if let vendorNumber, vendorNumber.isEmpty || !vendorNumber.allSatisfy(\.isNumber) {
            throw ValidationError("--vendor-number: digits only, like 85012345")
        }
        if let date, PacificDay(date) == nil {
            throw ValidationError("--date: not a day: \(date.prefix(40)) (expected YYYY-MM-DD)")
        }
    }

    func run() throws {
        logging.bootstrap()
        try runReportingErrors {
            let conn = try database.migratedConnection()
            defer { conn.close() }
            let importer = AppleReportImporter(connection: conn)
            var worst: ReconcilerExitCode = .success
            for file in files {
                let result = importer.importFile(file, vendorNumber: vendorNumber, date: date)
                switch result.outcome {
                case .success(let outcome):
                    print(Self.line(result, outcome))
                case .failure(let error):
                    let message = Redactor.shared.redact(String(describing: error))
                    FileHandle.standardError.write(Data("error: \(message) (nothing of \(file) was loaded)\n".utf8))
                    // A file Apple's format refuses is bad input (64); anything else (the database) is the classifier's.
                    let code = error is AppleReportError ? .usage : ReconcilerErrorClassifier.exitCode(for: error)
                    if worst == .success || code != .usage { worst = code }
                }
            }
            if worst != .success { throw ExitCode(worst.rawValue) }
        }
    }

    /// `F: Subscriber report, 2026-11-20 to 2026-11-20: 12 rows imported` or `... already imported on DATE`.
    static func line(_ result: AppleReportImporter.FileResult, _ outcome: AppleReportStore.Outcome) -> String {
        var text = "\(result.file): \(result.kind?.title ?? "report")"
        if let start = result.periodStart, let end = result.periodEnd {
            text += start == end ? ", \(start)" : ", \(start) to \(end)"
        }
        if let month = result.fiscalMonth { text += " (fiscal month \(month))" }
        switch outcome {
        case .imported(_, let rows):
            return text + ": \(rows) row\(rows == 1 ? "" : "s") imported"
        case .alreadyImported(_, let name, let date):
            return text + ": already imported on \(RFC3339.string(date)) as \(name); nothing loaded"
        }
    }
}
