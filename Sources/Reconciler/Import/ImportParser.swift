import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Streams subscription records out of an import file (JSON Lines or RFC 4180 CSV),
/// yielding one `Result` per record so the caller can stop at the first error or skip
/// invalid records.
///
/// Memory is constant in the file size: the file is read in chunks and only the current
/// record is held (at most `Options.maxRecordBytes`). The bounds on a record (docs/operations.md, "Backfill,
/// import, explain"; `CSVRecordScanner`, `JSONLineScanner`) make every input end: a line with no line break
/// for twice `maxRecordBytes` ends the iteration with an error (`stoppedEarly`). The one exception, on purpose, is
/// the set of `original_transaction_id`s already seen (O(number of records) ids), needed
/// to report a duplicate on its second occurrence with both line numbers.
///
/// Single-pass and single-threaded: iterate it once, from one thread.
public final class ImportParser: Sequence, IteratorProtocol {
    /// Limits and tuning.
    public struct Options: Sendable {
        /// The largest record accepted, in bytes (default 8 MiB; receipts reach 300,000+ chars).
        public var maxRecordBytes: Int
        /// The read chunk size in bytes (default 64 KiB).
        public var chunkSize: Int
        /// Name a repeated original_transaction_id here (remembers every id: memory grows with the file).
        /// `Importer` turns this off and detects duplicates in PostgreSQL instead, in constant memory.
        public var detectDuplicates: Bool

        public init(maxRecordBytes: Int = 8 << 20, chunkSize: Int = 64 << 10, detectDuplicates: Bool = true) {
            self.maxRecordBytes = Swift.max(1, maxRecordBytes)
            self.chunkSize = Swift.max(16, chunkSize)
            self.detectDuplicates = detectDuplicates
        }
    }

    /// The field names, in the order records are validated.
    public static let requiredFields = [
        "user_id", "product_id", "original_transaction_id", "latest_receipt", "expires_at",
    ]
    public static let optionalFields = ["environment", "bundle_id", "currency", "app_account_token"]
    static let knownFields = Set(requiredFields + optionalFields)
    /// At most this many distinct unknown names are remembered for the warning.
    static let maxUnknownFieldNames = 50

    /// The file as named in messages.
    public let source: String
    /// The format in use (explicit, from the extension, or sniffed).
    public let format: ImportFormat

    private let reader: ChunkedByteReader
    private let ownedDescriptor: Int32?
    private let fileHandle: FileHandle?
    private var csv: CSVRecordScanner
    private var jsonLines: JSONLineScanner
    /// CSV: column index -> known field name (nil for ignored columns).
    private var columnFields: [String?] = []
    private var unknown: Set<String> = []
    private var seenTransactions: [String: Int] = [:]
    private let detectDuplicates: Bool
    private var needsPrepare = false
    private var finished = false

    /// Opens `path` and, for CSV, reads and checks the header row.
    /// - Parameter format: overrides detection by extension and content.
    /// - Throws: `ImportFileError` if the file cannot be opened or read, or the CSV header is
    ///   missing, malformed, lacks required columns or repeats a column.
    public convenience init(
        path: String,
        format: ImportFormat? = nil,
        options: Options = Options()
    )
        throws(ImportFileError)
    {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let message = String(cString: strerror(errno))
            throw ImportFileError(file: path, code: .cannotOpen, problem: "cannot open: \(message)")
        }
        try self.init(
            descriptor: fd,
            owned: true,
            handle: nil,
            name: path,
            format: format ?? ImportFormat.fromExtension(of: path),
            options: options
        )
    }

    /// Reads from an open `fileHandle` (e.g. standard input) from its current position; the
    /// caller keeps ownership and closes it. `name` is used in messages.
    public convenience init(
        fileHandle: FileHandle,
        name: String,
        format: ImportFormat? = nil,
        options: Options = Options()
    ) throws(ImportFileError) {
        try self.init(
            descriptor: fileHandle.fileDescriptor,
            owned: false,
            handle: fileHandle,
            name: name,
            format: format,
            options: options
        )
    }

    private init(
        descriptor: Int32,
        owned: Bool,
        handle: FileHandle?,
        name: String,
        format: ImportFormat?,
        options: Options
    ) throws(ImportFileError) {
        reader = ChunkedByteReader(fileDescriptor: descriptor, chunkSize: options.chunkSize)
        ownedDescriptor = owned ? descriptor : nil
        fileHandle = handle
        source = name
        csv = CSVRecordScanner(maxRecordBytes: options.maxRecordBytes)
        jsonLines = JSONLineScanner(maxRecordBytes: options.maxRecordBytes)
        detectDuplicates = options.detectDuplicates
        do {
            try reader.fill(atLeast: 3)
        } catch {
            if owned { close(descriptor) }
            throw ImportFileError(file: name, code: .readFailed, problem: "cannot read: \(error.message)")
        }
        if reader.available >= 3, reader.buffer[reader.start] == 0xEF, reader.buffer[reader.start + 1] == 0xBB,
            reader.buffer[reader.start + 2] == 0xBF
        {
            reader.start += 3
        }
        self.format = format ?? ImportFormat.sniff(reader.buffer[reader.start..<reader.end])
        if self.format == .csv {
            do {
                try readHeader()
            } catch {
                if owned { close(descriptor) }
                throw error
            }
        }
    }

    deinit {
        if let ownedDescriptor { close(ownedDescriptor) }
    }

    /// Names of fields (JSON keys or CSV columns) that were ignored, sorted; complete once
    /// iteration has finished (JSON keys are discovered line by line). At most 50 names.
    public var unknownFields: [String] { unknown.sorted() }

    /// At most one warning, listing the ignored unknown fields.
    public var warnings: [String] {
        guard !unknown.isEmpty else { return [] }
        let noun = format == .csv ? "columns" : "fields"
        return ["\(source): ignoring unknown \(noun): " + unknownFields.joined(separator: ", ")]
    }

    /// The most bytes the parser has held for reading and for the current record (for tests
    /// and diagnostics: it stays bounded by chunk size plus the longest record).
    public var bufferHighWaterMark: Int {
        reader.buffer.capacity + Swift.max(csv.highWaterMark, jsonLines.highWaterMark)
    }

    /// True when the iteration ended before the end of the file (a read error, or a line with no line break
    /// within twice `maxRecordBytes`): the records after it were never seen. Complete once iteration has finished.
    public private(set) var stoppedEarly = false

    /// The number of distinct transaction ids remembered for duplicate detection.
    public var rememberedTransactionCount: Int { seenTransactions.count }

    public func makeIterator() -> ImportParser { self }

    /// The next record, or the problem with it; `nil` after the last record.
    public func next() -> Result<ImportRecord, ImportLineError>? {
        while !finished {
            switch format {
            case .csv:
                if needsPrepare { csv.prepareForNext() }
                needsPrepare = true
                guard let event = nextCSVEvent() else { return nil }
                switch event {
                case .blank:
                    continue
                case .record(let line):
                    let result = csvRecord(line: line)
                    if case .failure(let error) = result, csv.spansLines { return .failure(cutBack(error)) }
                    return result
                case .error(let line, let fieldIndex, let code, let message):
                    let error = ImportLineError(
                        line: line,
                        field: fieldIndex.map(columnName),
                        code: code,
                        problem: message
                    )
                    return .failure(csv.spansLines ? cutBack(error) : error)
                }
            case .jsonLines:
                if needsPrepare { jsonLines.prepareForNext() }
                needsPrepare = true
                guard let event = nextJSONEvent() else { return nil }
                switch event {
                case .tooLong(let line):
                    return .failure(
                        ImportLineError(
                            line: line,
                            field: nil,
                            code: .recordTooLong,
                            problem: "line is longer than \(jsonLines.maxRecordBytes) bytes"
                        )
                    )
                case .line(let line):
                    if let result = jsonRecord(line: line) { return result }
                case .stopped(let line):
                    let problem =
                        "no line break within \(2 * jsonLines.maxRecordBytes) bytes: the rest of the file was not read"
                    return .failure(ImportLineError(line: line, field: nil, code: .recordTooLong, problem: problem))
                case .readFailed(let line):
                    let problem = readFailure?.problem ?? "read failed"
                    return .failure(ImportLineError(line: line, field: nil, code: .readFailed, problem: problem))
                }
            }
        }
        return nil
    }

    // MARK: Reading

    private var readFailure: ImportLineError?

    private func scanAvailable<Event>(_ body: (UnsafeBufferPointer<UInt8>) -> (consumed: Int, event: Event?)) -> Event?
    {
        let (consumed, event) = reader.buffer.withUnsafeBufferPointer { pointer in
            body(UnsafeBufferPointer(rebasing: pointer[reader.start..<reader.end]))
        }
        reader.start += consumed
        return event
    }

    /// Reads more input; on a read error records it and ends the iteration.
    private func readMore() -> Bool {
        do {
            return try reader.readMore() > 0
        } catch {
            readFailure = ImportLineError(
                line: 0,
                field: nil,
                code: .readFailed,
                problem: "read failed: \(error.message)"
            )
            return false
        }
    }

    /// Ends the iteration before the end of the file.
    private func stop() {
        finished = true
        stoppedEarly = true
    }

    private func nextCSVEvent() -> CSVRecordScanner.Event? {
        nextEvent(
            consume: { csv.consume($0) },
            isStopped: { csv.isStopped },
            finish: { csv.finish() },
            readFailed: { .error(line: csv.line, fieldIndex: nil, code: $0.code, message: $0.problem) }
        )
    }

    private func nextJSONEvent() -> JSONLineScanner.Event? {
        nextEvent(
            consume: { jsonLines.consume($0) },
            isStopped: { jsonLines.isStopped },
            finish: { jsonLines.finish() },
            readFailed: { _ in .readFailed(jsonLines.currentLine) }
        )
    }

    /// The next event of a scanner (CSV or JSON Lines), reading more input as it needs: `consume` scans the
    /// buffered bytes, `finish` the end of the input, and `readFailed` is the event of a read error. A scanner that
    /// stops (`isStopped`), a read error and the end of the input end the iteration.
    private func nextEvent<Event>(
        consume: (UnsafeBufferPointer<UInt8>) -> (consumed: Int, event: Event?),
        isStopped: () -> Bool,
        finish: () -> Event?,
        readFailed: (ImportLineError) -> Event
    ) -> Event? {
        while true {
            if reader.available > 0, let event = scanAvailable(consume) {
                if isStopped() { stop() }
                return event
            }
            if !readMore() {
                if let failure = readFailure {
                    stop()
                    return readFailed(failure)
                }
                if let event = finish() { return event }
                finished = true
                return nil
            }
        }
    }

    // MARK: CSV

    /// A failed record that ran over several lines is taken as its first line alone (`CSVRecordScanner`).
    private func cutBack(_ error: ImportLineError) -> ImportLineError {
        let lines = csv.line - error.line
        csv.cutBackToFirstLine()
        return ImportLineError(
            line: error.line,
            field: error.field,
            code: error.code,
            problem: error.problem + " (the record ran over \(lines) lines: it is taken as line \(error.line) alone)",
            firstLine: error.firstLine
        )
    }

    private func readHeader() throws(ImportFileError) {
        var headerEvent: CSVRecordScanner.Event?
        repeat {
            if headerEvent != nil { csv.prepareForNext() }
            headerEvent = nextCSVEvent()
        } while headerEvent == .blank
        needsPrepare = true
        guard let event = headerEvent else {
            throw ImportFileError(file: source, code: .missingHeader, problem: "empty file: no CSV header row")
        }
        guard case .record = event else {
            if case .error(_, _, let code, let message) = event, code == .readFailed {
                throw ImportFileError(file: source, code: .readFailed, problem: message)
            }
            let message: String
            if case .error(let line, _, _, let text) = event {
                message = "line \(line): \(text)"
            } else {
                message = "unreadable"
            }
            throw ImportFileError(file: source, code: .malformedHeader, problem: "header row: \(message)")
        }
        var spelled: [String] = []
        for index in 0..<csv.fieldCount {
            spelled.append(String(decoding: csv.field(index), as: UTF8.self).trimmingCharacters(in: .whitespaces))
        }
        let names = spelled.map { $0.lowercased() }
        var counts: [String: Int] = [:]
        for name in names { counts[name, default: 0] += 1 }
        let duplicated = counts.filter { $0.value > 1 }.map(\.key).sorted()
        let missing = Self.requiredFields.filter { counts[$0] == nil }.sorted()
        let problems: [(ImportFileError.Code, String, [String])] = [
            (.duplicateColumns, "header repeats columns: ", duplicated),
            (.missingColumns, "missing required columns: ", missing),
        ]
        for (code, what, columns) in problems where !columns.isEmpty {
            throw ImportFileError(
                file: source,
                code: code,
                problem: what + columns.joined(separator: ", "),
                columns: columns
            )
        }
        columnFields = names.map { Self.knownFields.contains($0) ? $0 : nil }
        for (name, spelling) in zip(names, spelled) where !Self.knownFields.contains(name) {
            rememberUnknown(spelling.isEmpty ? "(empty)" : spelling)
        }
    }

    private func columnName(_ index: Int) -> String {
        if index < columnFields.count, let name = columnFields[index] { return name }
        return "column \(index + 1)"
    }

    private func csvRecord(line: Int) -> Result<ImportRecord, ImportLineError> {
        guard csv.fieldCount == columnFields.count else {
            return .failure(
                ImportLineError(
                    line: line,
                    field: nil,
                    code: .wrongFieldCount,
                    problem: "expected \(columnFields.count) fields, found \(csv.fieldCount)"
                )
            )
        }
        var values: [String: String] = [:]
        for (index, name) in columnFields.enumerated() {
            guard let name else { continue }
            guard let value = String(validating: csv.field(index), as: UTF8.self) else {
                return .failure(
                    ImportLineError(line: line, field: name, code: .invalidUTF8, problem: "is not valid UTF-8")
                )
            }
            if !value.isEmpty { values[name] = value }
        }
        return finishRecord(values, present: Set(columnFields.compactMap { $0 }), line: line)
    }

    // MARK: JSON Lines

    /// Returns nil for a blank line.
    private func jsonRecord(line: Int) -> Result<ImportRecord, ImportLineError>? {
        var bytes = jsonLines.bytes[...]
        while let last = bytes.last, last == 0x20 || last == 0x09 || last == 0x0D { bytes.removeLast() }
        while let first = bytes.first, first == 0x20 || first == 0x09 || first == 0x0D { bytes.removeFirst() }
        if bytes.isEmpty { return nil }
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: Data(bytes), options: [])
        } catch {
            return .failure(
                ImportLineError(line: line, field: nil, code: .malformedJSON, problem: "is not valid JSON")
            )
        }
        guard let dictionary = object as? [String: Any] else {
            return .failure(
                ImportLineError(
                    line: line,
                    field: nil,
                    code: .malformedJSON,
                    problem: "expected a JSON object, got \(Self.jsonTypeName(object))"
                )
            )
        }
        var values: [String: String] = [:]
        var present: Set<String> = []
        for (key, value) in dictionary {
            guard Self.knownFields.contains(key) else {
                rememberUnknown(key)
                continue
            }
            if value is NSNull { continue }
            guard let string = value as? String else {
                return .failure(
                    ImportLineError(
                        line: line,
                        field: key,
                        code: .invalidValue,
                        problem: "expected a string, got \(Self.jsonTypeName(value))"
                    )
                )
            }
            present.insert(key)
            if !string.isEmpty { values[key] = string }
        }
        return finishRecord(values, present: present, line: line)
    }

    private static func jsonTypeName(_ value: Any) -> String {
        switch value {
        case is String: return "a string"
        case is [Any]: return "an array"
        case is [String: Any]: return "an object"
        case is NSNull: return "null"
        case let number as NSNumber:
            return String(cString: number.objCType) == "c" ? "a boolean" : "a number"
        default: return "a non-string value"
        }
    }

    // MARK: Validation

    private func rememberUnknown(_ name: String) {
        if unknown.count < Self.maxUnknownFieldNames { unknown.insert(String(name.prefix(64))) }
    }

    /// Validates the fields of one record (`values` holds non-empty values; `present` the names
    /// that appeared at all) and checks the transaction id for duplicates.
    private func finishRecord(
        _ values: [String: String],
        present: Set<String>,
        line: Int
    ) -> Result<ImportRecord, ImportLineError> {
        switch ImportRecordValidator.validate(values: values, present: present, line: line) {
        case .failure(let error):
            return .failure(error)
        case .success(let record):
            guard detectDuplicates else { return .success(record) }
            if let firstLine = seenTransactions[record.originalTransactionId] {
                return .failure(
                    ImportLineError(
                        line: line,
                        field: "original_transaction_id",
                        code: .duplicateTransaction,
                        problem: "\(ImportRecordValidator.quoted(record.originalTransactionId)) "
                            + "already appeared on line \(firstLine)",
                        firstLine: firstLine
                    )
                )
            }
            seenTransactions[record.originalTransactionId] = line
            return .success(record)
        }
    }
}
