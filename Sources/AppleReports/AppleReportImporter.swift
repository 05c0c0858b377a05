import Foundation
import Postgres

/// `apple-reports import`: each file read, checked and stored on its own (one transaction per file), so a bad file
/// stores nothing of itself and never stops the others.
public struct AppleReportImporter {
    /// How one file ended.
    public struct FileResult: Sendable {
        /// The file as the caller named it.
        public let file: String
        /// Its kind, when the header was recognised.
        public let kind: AppleReportKind?
        /// Stored or already stored; or why nothing of it was stored.
        public let outcome: Result<AppleReportStore.Outcome, any Error>
        /// The first and last day of its rows, for the summary.
        public let periodStart: String?
        public let periodEnd: String?
        public let fiscalMonth: String?
    }

    let store: AppleReportStore

    public init(connection: PostgresConnection) {
        store = AppleReportStore(connection: connection)
    }

    /// Reads, checks and stores the file at `path`; never throws: the result says what happened. `date`
    /// (`YYYY-MM-DD`) is a Subscription report's day when its file name does not state it.
    public func importFile(_ path: String, vendorNumber: String?, date: String? = nil) -> FileResult {
        let contents: AppleReportContents
        do {
            contents = try AppleReportParser.parse(path: path, date: date)
        } catch {
            return FileResult(
                file: path,
                kind: nil,
                outcome: .failure(error),
                periodStart: nil,
                periodEnd: nil,
                fiscalMonth: nil
            )
        }
        let outcome: Result<AppleReportStore.Outcome, any Error>
        do {
            let name = URL(fileURLWithPath: path).lastPathComponent
            outcome = .success(try store.store(contents, fileName: name, vendorNumber: vendorNumber))
        } catch var error as PostgresError {
            error.statement = nil  // an operator needs the server's message, not the statement
            outcome = .failure(error)
        } catch {
            outcome = .failure(error)
        }
        return FileResult(
            file: path,
            kind: contents.kind,
            outcome: outcome,
            periodStart: contents.periodStart,
            periodEnd: contents.periodEnd,
            fiscalMonth: contents.fiscalMonth
        )
    }
}
