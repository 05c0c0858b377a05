import Foundation

/// Writes tieout.csv, tieout.json and tieout.html into a directory (docs/tie-out.md, "Reading the files"). Each file is
/// written to a temporary name in the same directory, fsynced and renamed over the old one, so a reader never sees
/// half a file.
public enum TieOutReport {
    public static let csvName = "tieout.csv"
    public static let jsonName = "tieout.json"
    public static let htmlName = "tieout.html"

    /// - Throws: `TieOutError`: a directory that is not writable or full (exit 78, naming the path).
    public static func write(_ result: TieOutResult, directory: String) throws(TieOutError) {
        let csv: String
        let json: Data
        do {
            csv = try TieOutCSV.document(result)
            json = try TieOutJSON.data(result)
        } catch {
            throw TieOutError(.failure, "cannot encode the tie-out: \(error)")
        }
        do throws(ReportError) {
            try AtomicFiles.makeDirectories(directory)
            try AtomicFiles.replace("\(directory)/\(csvName)", Data(csv.utf8))
            try AtomicFiles.replace("\(directory)/\(jsonName)", json)
            try AtomicFiles.replace("\(directory)/\(htmlName)", Data(TieOutHTML.render(result).utf8))
            AtomicFiles.syncDirectory(directory)
        } catch {
            throw TieOutError(error)
        }
    }
}
