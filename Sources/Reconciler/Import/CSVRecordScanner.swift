/// The RFC 4180 state machine behind `ImportParser`: fed chunks of bytes, it stops at each
/// complete record (or syntax error) and keeps only the current record's bytes, bounded by
/// `maxRecordBytes`, so memory stays constant however large the file is.
///
/// Accepts CRLF or LF line ends; quoted fields may hold commas, quotes (doubled) and line
/// breaks. After a syntax error it skips to the end of the physical line.
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

    let maxRecordBytes: Int
    let maxFields: Int
    private var state = State.fieldStart
    private var pendingCR = false
    private(set) var bytes: [UInt8] = []
    private(set) var fieldEnds: [Int] = []
    private var sawQuote = false
    private var overflowed = false
    /// The physical line the scanner is on (1 + line feeds consumed).
    private(set) var line = 1
    private var recordStartLine = 1
    private var quoteOpenLine = 1
    /// The largest capacity the record buffer has reached.
    private(set) var highWaterMark = 0

    init(maxRecordBytes: Int, maxFields: Int = 10_000) {
        self.maxRecordBytes = maxRecordBytes
        self.maxFields = maxFields
    }

    var fieldCount: Int { fieldEnds.count }

    /// The raw bytes of field `index` of the last record.
    func field(_ index: Int) -> ArraySlice<UInt8> {
        let lower = index == 0 ? 0 : fieldEnds[index - 1]
        return bytes[lower..<fieldEnds[index]]
    }

    private mutating func resetRecord() {
        highWaterMark = max(highWaterMark, bytes.capacity)
        bytes.removeAll(keepingCapacity: true)
        fieldEnds.removeAll(keepingCapacity: true)
        sawQuote = false
        overflowed = false
        state = .fieldStart
        recordStartLine = line
    }

    private mutating func append(_ byte: UInt8) {
        if bytes.count >= maxRecordBytes {
            overflowed = true
        } else {
            bytes.append(byte)
        }
    }

    private mutating func append(_ run: UnsafeBufferPointer<UInt8>) {
        let room = maxRecordBytes - bytes.count
        if run.count > room {
            overflowed = true
            if room > 0 { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: run[0..<room])) }
        } else {
            bytes.append(contentsOf: run)
        }
    }

    /// Fast path: the length of the run from `start` that holds no byte the current state reacts
    /// to (inside quotes: only `"`; unquoted: `,` `"` CR LF), counting line feeds inside quotes.
    private mutating func plainRun(_ input: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var end = start
        if state == .quoted {
            while end < input.count {
                let byte = input[end]
                if byte == UInt8(ascii: "\"") { break }
                if byte == 0x0A { line += 1 }
                end += 1
            }
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
        if fieldEnds.count >= maxFields { overflowed = true } else { fieldEnds.append(bytes.count) }
    }

    /// Ends the record at a line break and returns its event (the caller moves on afterwards).
    private mutating func endRecord() -> Event {
        endField()
        let event: Event
        if overflowed {
            event = .error(
                line: recordStartLine,
                fieldIndex: nil,
                code: .recordTooLong,
                message: "record is longer than \(maxRecordBytes) bytes or \(maxFields) fields"
            )
        } else if !sawQuote && fieldEnds.count == 1 && bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) {
            event = .blank
        } else {
            event = .record(line: recordStartLine)
        }
        return event
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
        state = .skipLine
        return event
    }

    /// Consumes bytes until an event happens; returns how many bytes were consumed.
    mutating func consume(_ input: UnsafeBufferPointer<UInt8>) -> (consumed: Int, event: Event?) {
        var index = 0
        while index < input.count {
            if !pendingCR && (state == .quoted || state == .unquoted) {
                let run = plainRun(input, from: index)
                if run > 0 {
                    append(UnsafeBufferPointer(rebasing: input[index..<(index + run)]))
                    index += run
                    continue
                }
            }
            let byte = input[index]
            index += 1
            if byte == 0x0A { line += 1 }
            if pendingCR {
                pendingCR = false
                if byte != 0x0A {
                    switch state {
                    case .fieldStart, .unquoted:
                        append(0x0D)
                        state = .unquoted
                    case .quoteInQuoted:
                        return (index, syntaxError("unexpected carriage return after a closing quote"))
                    case .quoted, .skipLine:
                        break
                    }
                }
            }
            switch state {
            case .skipLine:
                if byte == 0x0A {
                    resetRecord()
                }
            case .fieldStart, .unquoted:
                switch byte {
                case UInt8(ascii: ","):
                    endField()
                    state = .fieldStart
                case UInt8(ascii: "\""):
                    if state == .fieldStart {
                        state = .quoted
                        sawQuote = true
                        quoteOpenLine = line
                    } else {
                        return (index, syntaxError("unexpected quote inside an unquoted field"))
                    }
                case 0x0D:
                    pendingCR = true
                case 0x0A:
                    return (index, endRecord())
                default:
                    append(byte)
                    state = .unquoted
                }
            case .quoted:
                if byte == UInt8(ascii: "\"") { state = .quoteInQuoted } else { append(byte) }
            case .quoteInQuoted:
                switch byte {
                case UInt8(ascii: "\""):
                    append(byte)
                    state = .quoted
                case UInt8(ascii: ","):
                    endField()
                    state = .fieldStart
                case 0x0D:
                    pendingCR = true
                case 0x0A:
                    return (index, endRecord())
                default:
                    return (index, syntaxError("unexpected character after a closing quote"))
                }
            }
        }
        return (index, nil)
    }

    /// Handles end of file: the last record without a trailing line break, or an unterminated quote.
    mutating func finish() -> Event? {
        pendingCR = false
        switch state {
        case .skipLine:
            resetRecord()
            return nil
        case .quoted:
            let event = Event.error(
                line: recordStartLine,
                fieldIndex: fieldEnds.count,
                code: .malformedCSV,
                message: "unterminated quoted field (quote opened on line \(quoteOpenLine))"
            )
            state = .skipLine
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
