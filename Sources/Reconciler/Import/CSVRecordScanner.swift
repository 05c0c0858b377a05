/// The RFC 4180 state machine behind `ImportParser` and the price catalog: fed chunks of bytes, it stops at
/// each complete record (or syntax error) and keeps only the current record's bytes, bounded by
/// `maxRecordBytes`, so memory stays constant however large the file is.
///
/// Accepts CRLF or LF line ends; quoted fields may hold commas, quotes (doubled) and line breaks. The bounds
/// (docs/operations.md, "Backfill, import, explain"), so that no input can swallow the file or spin:
/// - a record spans at most `maxRecordLines` physical lines. A quote still open past them, or at the end of the
///   file, is an error naming the line where it opened; the bad record is then taken as its first line alone
///   and scanning resumes on the line after it (the bytes after that line are read again), so the records
///   after it are not lost;
/// - a record longer than `maxRecordBytes` is an error; the rest of its line is skipped up to its line break;
/// - a line being skipped (too long, or after a syntax error) that has no line break within twice
///   `maxRecordBytes` bytes stops the scan (`isStopped`): the rest of the input is not read.
struct CSVRecordScanner {
    enum Event: Equatable {
        /// A record is complete: its fields are `field(_:)` for `0..<fieldCount`.
        case record(line: Int)
        /// A blank line was skipped (no event is surfaced to callers; internal bookkeeping).
        case blank
        /// A syntax or size problem; `fieldIndex` is the 0-based field it was found in.
        case error(line: Int, fieldIndex: Int?, code: ImportLineError.Code, message: String)
    }

    private enum State {
        case fieldStart, unquoted, quoted, quoteInQuoted, skipLine
    }

    /// The most physical lines one record may span: no field of an import or a price list holds a line
    /// break (a receipt is base64), so a quoted field may break a line a few times but never run on.
    static let defaultMaxRecordLines = 10

    let maxRecordBytes: Int
    let maxFields: Int
    let maxRecordLines: Int
    private var state = State.fieldStart
    private var pendingCR = false
    private(set) var bytes: [UInt8] = []
    private(set) var fieldEnds: [Int] = []
    private var sawQuote = false
    private var tooManyFields = false
    /// The physical line the scanner is on (1 + line feeds consumed).
    private(set) var line = 1
    private var recordStartLine = 1
    private var quoteOpenLine = 1
    /// Whether the last byte read was a line feed.
    private var lastWasLineFeed = false
    /// The raw input of the current record after its first line break, to read again from the record's
    /// second line if the record turns out to be unterminated.
    private var continuation: [UInt8] = []
    /// Where, in the input being scanned, `continuation` starts to grow (nil: the record is on one line).
    private var captureFrom: Int?
    private var resyncPending = false
    /// Bytes to read again before any new input (a record cut back to its first line).
    private var replay: [UInt8] = []
    /// In `skipLine`: the bytes of the record read or skipped so far, and whether it is skipped for being too long.
    private var skipped = 0
    private var skippingTooLong = false
    /// True once a skipped line had no line break within twice `maxRecordBytes`: the rest of the input is ignored.
    private(set) var isStopped = false
    /// The largest capacity the record buffers have reached.
    private(set) var highWaterMark = 0

    init(maxRecordBytes: Int, maxFields: Int = 10_000, maxRecordLines: Int = defaultMaxRecordLines) {
        self.maxRecordBytes = maxRecordBytes
        self.maxFields = maxFields
        self.maxRecordLines = Swift.max(1, maxRecordLines)
    }

    var fieldCount: Int { fieldEnds.count }

    /// The raw bytes of field `index` of the last record.
    func field(_ index: Int) -> ArraySlice<UInt8> {
        let lower = index == 0 ? 0 : fieldEnds[index - 1]
        return bytes[lower..<fieldEnds[index]]
    }

    private mutating func resetRecord() {
        highWaterMark = max(highWaterMark, bytes.capacity + continuation.capacity + replay.capacity)
        bytes.removeAll(keepingCapacity: true)
        fieldEnds.removeAll(keepingCapacity: true)
        continuation.removeAll(keepingCapacity: true)
        captureFrom = nil
        sawQuote = false
        tooManyFields = false
        skipped = 0
        skippingTooLong = false
        state = .fieldStart
        recordStartLine = line
    }

    /// Appends to the record; false when it would pass `maxRecordBytes` (nothing is appended then).
    private mutating func append(_ byte: UInt8) -> Bool {
        guard bytes.count < maxRecordBytes else { return false }
        bytes.append(byte)
        return true
    }

    private mutating func append(_ run: UnsafeBufferPointer<UInt8>) -> Bool {
        guard run.count <= maxRecordBytes - bytes.count else { return false }
        bytes.append(contentsOf: run)
        return true
    }

    /// Fast path: the length of the run from `start` that holds no byte the current state reacts to
    /// (inside quotes: `"` and LF; unquoted: `,` `"` CR LF).
    private func plainRun(_ input: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var end = start
        if state == .quoted {
            while end < input.count, input[end] != UInt8(ascii: "\""), input[end] != 0x0A { end += 1 }
        } else {
            while end < input.count {
                let byte = input[end]
                if byte == UInt8(ascii: ",") || byte == UInt8(ascii: "\"") || byte == 0x0D || byte == 0x0A { break }
                end += 1
            }
        }
        return end - start
    }

    private mutating func endField() {
        if fieldEnds.count >= maxFields { tooManyFields = true } else { fieldEnds.append(bytes.count) }
    }

    /// Ends the record at a line break and returns its event (the caller moves on afterwards).
    private mutating func endRecord() -> Event {
        endField()
        if tooManyFields {
            return .error(
                line: recordStartLine,
                fieldIndex: nil,
                code: .recordTooLong,
                message: "record has more than \(maxFields) fields"
            )
        }
        if !sawQuote && fieldEnds.count == 1 && bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return .blank }
        return .record(line: recordStartLine)
    }

    /// Must be called before handling the next record after an event, so the last record's
    /// bytes stay readable until then.
    mutating func prepareForNext() {
        if state != .skipLine { resetRecord() }
    }

    private mutating func syntaxError(_ message: String) -> Event {
        let event = Event.error(
            line: recordStartLine,
            fieldIndex: fieldEnds.count,
            code: .malformedCSV,
            message: message
        )
        skipped = bytes.count
        state = .skipLine
        return event
    }

    /// The record passed `maxRecordBytes`. On one line: the rest of the line is skipped and the error comes at
    /// its line break (nil now). Over several lines: an error now, and the record is cut back to its first line.
    private mutating func recordTooLong(dropped: Int = 1) -> Event? {
        guard captureFrom != nil else {
            skipped = bytes.count + dropped
            state = .skipLine
            skippingTooLong = true
            return nil
        }
        resyncPending = true
        return .error(
            line: recordStartLine,
            fieldIndex: nil,
            code: .recordTooLong,
            message: "record (quote opened on line \(quoteOpenLine)) is longer than \(maxRecordBytes) bytes over "
                + "\(line - recordStartLine + 1) lines; it is taken as line \(recordStartLine) alone"
        )
    }

    /// A quote still open after `maxRecordLines` lines or at the end of the input: an error naming the line it
    /// opened on and the lines it covered; the record is cut back to its first line.
    private mutating func unterminatedQuote(atEnd: Bool) -> Event {
        // Right after a line break, the line after it is not covered yet.
        let covered = line - recordStartLine + (lastWasLineFeed ? 0 : 1)
        let whereStill =
            atEnd
            ? "at the end of the file (it covered \(covered) line\(covered == 1 ? "" : "s"))"
            : "after \(covered) lines (a record spans at most \(maxRecordLines))"
        resyncPending = captureFrom != nil
        if !resyncPending { state = .skipLine }
        return .error(
            line: recordStartLine,
            fieldIndex: fieldEnds.count,
            code: .malformedCSV,
            message: "unterminated quoted field: the quote opened on line \(quoteOpenLine) is still open \(whereStill)"
                + (covered > 1 ? "; the record is taken as line \(recordStartLine) alone" : "")
        )
    }

    private mutating func resynchronise() {
        resyncPending = false
        cutBackToFirstLine()
    }

    /// Whether the last record or error ran over more than one physical line.
    var spansLines: Bool { captureFrom != nil }

    /// Takes the last record, which failed, as its first line alone: the input after that line is read again.
    /// No field of an import holds a line break, so a failed record over several lines is a stray quote's
    /// doing, and the lines it swallowed are records of their own.
    mutating func cutBackToFirstLine() {
        guard captureFrom != nil else { return }
        replay = continuation + replay
        continuation = []
        line = recordStartLine + 1
        pendingCR = false
        resetRecord()
    }

    /// Consumes bytes until an event happens; returns how many bytes of `input` were consumed.
    mutating func consume(_ input: UnsafeBufferPointer<UInt8>) -> (consumed: Int, event: Event?) {
        if isStopped { return (input.count, nil) }
        if !replay.isEmpty, let event = consumeReplay() { return (0, event) }
        return scan(input)
    }

    /// Reads the pending replay bytes; an event stops it, and the bytes not read yet stay pending.
    private mutating func consumeReplay() -> Event? {
        let pending = replay
        replay = []
        let (consumed, event) = pending.withUnsafeBufferPointer { scan($0) }
        if !isStopped { replay += pending[consumed...] }
        return event
    }

    private mutating func scan(_ input: UnsafeBufferPointer<UInt8>) -> (consumed: Int, event: Event?) {
        captureFrom = captureFrom == nil ? nil : 0
        let (consumed, event) = scanBytes(input)
        if let from = captureFrom, consumed > from {
            continuation.append(contentsOf: UnsafeBufferPointer(rebasing: input[from..<consumed]))
        }
        if resyncPending { resynchronise() }
        return (consumed, event)
    }

    /// Skips to the end of the line; an event when the line was too long, or when no line break comes in time.
    private mutating func skipToLineEnd(_ input: UnsafeBufferPointer<UInt8>, from start: Int) -> (Int, Event?) {
        var index = start
        while index < input.count, input[index] != 0x0A { index += 1 }
        skipped += index - start
        lastWasLineFeed = index < input.count || (index == start && lastWasLineFeed)
        if skipped > 2 * maxRecordBytes {
            isStopped = true
            return (
                input.count,
                .error(
                    line: recordStartLine,
                    fieldIndex: nil,
                    code: .recordTooLong,
                    message: "no line break within \(2 * maxRecordBytes) bytes: the rest of the file was not read"
                )
            )
        }
        guard index < input.count else { return (index, nil) }
        line += 1
        pendingCR = false
        let tooLong = skippingTooLong
        resetRecord()
        guard tooLong else { return (index + 1, nil) }
        let message = "record is longer than \(maxRecordBytes) bytes"
        return (index + 1, .error(line: line - 1, fieldIndex: nil, code: .recordTooLong, message: message))
    }

    private mutating func scanBytes(_ input: UnsafeBufferPointer<UInt8>) -> (consumed: Int, event: Event?) {
        var index = 0
        while index < input.count {
            if state == .skipLine {
                let (next, event) = skipToLineEnd(input, from: index)
                index = next
                if let event { return (index, event) }
                continue
            }
            if !pendingCR && (state == .quoted || state == .unquoted) {
                let run = plainRun(input, from: index)
                if run > 0 {
                    index += run
                    lastWasLineFeed = false
                    if !append(UnsafeBufferPointer(rebasing: input[(index - run)..<index])) {
                        if let event = recordTooLong(dropped: run) { return (index, event) }
                    }
                    continue
                }
            }
            let byte = input[index]
            index += 1
            if let event = step(byte, at: index) { return (index, event) }
        }
        return (index, nil)
    }

    /// One byte that is not part of a plain run; `index` is just after it.
    private mutating func step(_ byte: UInt8, at index: Int) -> Event? {
        lastWasLineFeed = byte == 0x0A
        if byte == 0x0A { line += 1 }
        if pendingCR {
            pendingCR = false
            if byte != 0x0A {
                switch state {
                case .fieldStart, .unquoted:
                    if !append(0x0D) { return recordTooLong() }
                    state = .unquoted
                case .quoteInQuoted:
                    return syntaxError("unexpected carriage return after a closing quote")
                case .quoted, .skipLine:
                    break
                }
            }
        }
        switch state {
        case .skipLine:
            return nil  // scanBytes skips lines itself
        case .fieldStart, .unquoted:
            return stepUnquoted(byte)
        case .quoted:
            if byte == UInt8(ascii: "\"") {
                state = .quoteInQuoted
                return nil
            }
            guard append(byte) else { return recordTooLong() }
            guard byte == 0x0A else { return nil }
            if captureFrom == nil { captureFrom = index }
            return line - recordStartLine >= maxRecordLines ? unterminatedQuote(atEnd: false) : nil
        case .quoteInQuoted:
            switch byte {
            case UInt8(ascii: "\""):
                state = .quoted
                return append(byte) ? nil : recordTooLong()
            case UInt8(ascii: ","):
                endField()
                state = .fieldStart
            case 0x0D:
                pendingCR = true
            case 0x0A:
                return endRecord()
            default:
                return syntaxError("unexpected character after a closing quote")
            }
            return nil
        }
    }

    private mutating func stepUnquoted(_ byte: UInt8) -> Event? {
        switch byte {
        case UInt8(ascii: ","):
            endField()
            state = .fieldStart
        case UInt8(ascii: "\""):
            guard state == .fieldStart else { return syntaxError("unexpected quote inside an unquoted field") }
            state = .quoted
            sawQuote = true
            quoteOpenLine = line
        case 0x0D:
            pendingCR = true
        case 0x0A:
            return endRecord()
        default:
            guard append(byte) else { return recordTooLong() }
            state = .unquoted
        }
        return nil
    }

    /// Handles end of input: bytes to read again, the last record without a trailing line break, or an
    /// unterminated quote. Call it until it returns nil.
    mutating func finish() -> Event? {
        if isStopped { return nil }
        if !replay.isEmpty, let event = consumeReplay() { return event }
        pendingCR = false
        switch state {
        case .skipLine:
            let tooLong = skippingTooLong
            let start = recordStartLine
            resetRecord()
            state = .skipLine
            guard tooLong else { return nil }
            return .error(
                line: start,
                fieldIndex: nil,
                code: .recordTooLong,
                message: "record is longer than \(maxRecordBytes) bytes"
            )
        case .quoted:
            let event = unterminatedQuote(atEnd: true)
            if resyncPending { resynchronise() } else { state = .skipLine }
            return event
        case .fieldStart where fieldEnds.isEmpty && bytes.isEmpty:
            return nil
        case .fieldStart, .unquoted, .quoteInQuoted:
            let event = endRecord()
            state = .skipLine  // so that a further finish() yields nothing
            return event == .blank ? nil : event
        }
    }
}
