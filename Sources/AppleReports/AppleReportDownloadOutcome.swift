/// How one report of `apple-reports download` ended (docs/apple-reports.md, "Downloading").
public struct AppleReportDownloadOutcome: Sendable, Equatable {
    public enum Result: Sendable, Equatable {
        /// Downloaded and stored now: the file's id and rows.
        case stored(fileId: Int64, rows: Int)
        /// A file of this report and period was stored before (downloaded or imported): not asked for again.
        case alreadyStored
        /// Downloaded, but a file with the same content was stored before under another name.
        case sameFileStoredBefore(fileId: Int64)
        /// Apple has no sales for the day: nothing to store (asked again on the next download).
        case noSales
        /// Not out yet (daily reports by 8 a.m. Pacific the next day, Financial reports by the end of the next
        /// fiscal month): asked again on the next download.
        case notYetAvailable(String)
        /// Past Apple's retention: it will never come.
        case gone(String)
        /// Apple refused, the retries ran out, or the file did not read: nothing of it stored.
        case failed(String)
    }

    public let label: String
    public let result: Result

    /// Whether the download as a whole failed because of this report.
    public var isFailure: Bool {
        if case .failed = result { return true }
        return false
    }
}
