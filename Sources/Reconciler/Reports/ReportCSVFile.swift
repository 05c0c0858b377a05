/// One report CSV being streamed to disk: encodes each row with `CSVWriter` (formula neutralisation
/// included), appends it to the file, and keeps the first rows for report.html (`ReportRowSample`).
///
/// Not Sendable: owned by one report generation.
final class ReportCSVFile {
    private let writer: CSVWriter
    private let sink: ReportFileSink
    private(set) var sample = ReportRowSample()

    /// Creates the file at `path` (which must not exist) and writes the header.
    init(path: String, _ columns: [String], numeric: Set<String>) throws(ReportError) {
        writer = CSVWriter(columns: columns.map { CSVColumn($0, numeric.contains($0) ? .numeric : .text) })
        sink = try ReportFileSink(path: path)
        try sink.write(writer.header())
    }

    /// Appends one row (values in column order).
    func add(_ row: [String]) throws(ReportError) {
        let line: String
        do {
            line = try writer.row(row)
        } catch {
            throw ReportError(.encoding, path: sink.path, "cannot encode row \(sample.total + 1): \(error)")
        }
        try sink.write(line)
        sample.add(row)
    }

    /// Flushes, fsyncs and closes the file.
    func close() throws(ReportError) { try sink.close() }
}
