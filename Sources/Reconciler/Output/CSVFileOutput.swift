import Foundation
import Synchronization

/// A CSV report being written to a file: the header goes out first, then rows as they are
/// produced, buffered into writes of about `bufferSize` bytes instead of one write per row.
///
/// Safe to call from several threads (the nightly pipeline finishes rows on many): the
/// buffer and the file handle are guarded by one `Mutex`, and each row is written whole.
/// Call `close()` (or at least `flush()`) at the end; a row is on disk only after that.
@available(macOS 15.0, *)
public final class CSVFileOutput: Sendable {
    private struct State {
        var handle: FileHandle
        var buffer: [UInt8]
        var rowsWritten: Int
        var closed: Bool
    }

    /// The encoder (columns and escaping rules).
    public let writer: CSVWriter
    /// The buffered byte count that triggers a write.
    public let bufferSize: Int
    private let ownsHandle: Bool
    private let state: Mutex<State>

    /// Creates (or truncates) the file at `path` and writes the header.
    /// - Throws: `CSVOutputError` naming the path if the file cannot be created.
    public convenience init(path: String, writer: CSVWriter, bufferSize: Int = 64 << 10) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil),
            let handle = FileHandle(forWritingAtPath: path)
        else {
            throw CSVOutputError(path: path, problem: "cannot create the file")
        }
        self.init(handle: handle, owned: true, writer: writer, bufferSize: bufferSize)
    }

    /// Writes to an open handle (e.g. standard output) that the caller keeps and closes;
    /// the header is buffered at once.
    public convenience init(fileHandle: FileHandle, writer: CSVWriter, bufferSize: Int = 64 << 10) {
        self.init(handle: fileHandle, owned: false, writer: writer, bufferSize: bufferSize)
    }

    private init(handle: FileHandle, owned: Bool, writer: CSVWriter, bufferSize: Int) {
        self.writer = writer
        self.bufferSize = max(1, bufferSize)
        self.ownsHandle = owned
        var buffer: [UInt8] = []
        buffer.reserveCapacity(self.bufferSize)
        buffer.append(contentsOf: writer.header().utf8)
        state = Mutex(State(handle: handle, buffer: buffer, rowsWritten: 0, closed: false))
    }

    /// Appends one row (values in column order).
    /// - Throws: `CSVWriterError` for a row of the wrong width, the handle's write error, or
    ///   `CSVOutputError` after `close()`.
    public func write(_ values: [String]) throws {
        let line = try writer.row(values)
        try append(line)
    }

    /// Appends one row given by column name (missing names become empty fields).
    public func write(_ values: [String: String]) throws {
        try append(writer.row(values))
    }

    /// The number of rows accepted so far (header not counted).
    public var rowsWritten: Int { state.withLock { $0.rowsWritten } }

    /// Writes the buffered bytes to the file.
    public func flush() throws {
        try state.withLock { state in try Self.drain(&state) }
    }

    /// Flushes and, if this object opened the file, closes it. Later writes throw.
    public func close() throws {
        try state.withLock { state in
            guard !state.closed else { return }
            state.closed = true
            try Self.drain(&state)
            if ownsHandle { try state.handle.close() }
        }
    }

    private func append(_ line: String) throws {
        try state.withLock { state in
            guard !state.closed else { throw CSVOutputError(path: nil, problem: "write after close") }
            state.buffer.append(contentsOf: line.utf8)
            state.rowsWritten += 1
            if state.buffer.count >= bufferSize { try Self.drain(&state) }
        }
    }

    private static func drain(_ state: inout State) throws {
        guard !state.buffer.isEmpty else { return }
        try state.handle.write(contentsOf: state.buffer)
        state.buffer.removeAll(keepingCapacity: true)
    }
}
