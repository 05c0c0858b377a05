/// Splits JSON Lines input into lines, keeping only the current line (bounded by `maxRecordBytes`) so memory
/// stays constant however large the file is. A longer line is an error at its line break; a line with no line
/// break within another `maxRecordBytes` stops the scan (docs/operations.md, "Backfill, import, explain").
struct JSONLineScanner {
    enum Event: Equatable {
        /// A line is complete; its bytes (without the line feed) are `bytes`.
        case line(Int)
        /// The line exceeded `maxRecordBytes` (its content was dropped).
        case tooLong(Int)
        /// The line had no line break within twice `maxRecordBytes`: the rest of the input is not read.
        case stopped(Int)
        /// Reading the file failed on this line (produced by the parser, not the scanner).
        case readFailed(Int)
    }

    let maxRecordBytes: Int
    private(set) var bytes: [UInt8] = []
    private var overflowed = false
    /// Bytes dropped from an overflowed line.
    private var skipped = 0
    private var line = 1
    private var lineStart = 1
    /// True once a line ran past its bound with no line break: the rest of the input is ignored.
    private(set) var isStopped = false
    /// The physical line being read.
    var currentLine: Int { line }
    /// The largest capacity the line buffer has reached.
    private(set) var highWaterMark = 0

    init(maxRecordBytes: Int) {
        self.maxRecordBytes = maxRecordBytes
    }

    /// Must be called before scanning the next line, after the last one has been used.
    mutating func prepareForNext() {
        highWaterMark = max(highWaterMark, bytes.capacity)
        bytes.removeAll(keepingCapacity: true)
        overflowed = false
        skipped = 0
        lineStart = line
    }

    private mutating func take(_ slice: UnsafeBufferPointer<UInt8>) {
        if overflowed {
            skipped += slice.count
        } else if bytes.count + slice.count > maxRecordBytes {
            overflowed = true
            skipped = bytes.count + slice.count - maxRecordBytes
            bytes.removeAll(keepingCapacity: true)
        } else {
            bytes.append(contentsOf: slice)
        }
    }

    mutating func consume(_ input: UnsafeBufferPointer<UInt8>) -> (consumed: Int, event: Event?) {
        if isStopped { return (input.count, nil) }
        var newline: Int?
        for index in input.indices where input[index] == 0x0A {
            newline = index
            break
        }
        guard let newline else {
            take(input)
            guard skipped > maxRecordBytes else { return (input.count, nil) }
            isStopped = true
            return (input.count, .stopped(lineStart))
        }
        take(UnsafeBufferPointer(rebasing: input[0..<newline]))
        line += 1
        return (newline + 1, overflowed ? .tooLong(lineStart) : .line(lineStart))
    }

    mutating func finish() -> Event? {
        guard !isStopped, overflowed || !bytes.isEmpty else { return nil }
        let event: Event = overflowed ? .tooLong(lineStart) : .line(lineStart)
        line += 1
        return event
    }
}
