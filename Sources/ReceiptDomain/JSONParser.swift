/// A small, linear, recursive-descent JSON parser over raw bytes.
///
/// Hand-written (rather than `JSONSerialization`) so that errors carry the exact byte offset,
/// numbers keep their literal text, booleans are never confused with `0`/`1`, and the result is
/// identical on every platform. Nesting is bounded so hostile input cannot overflow the stack.
struct JSONParser {
    /// Why the bytes are not JSON, and where (0-based byte offset).
    struct Failure: Error, Sendable, Equatable {
        let offset: Int
        let message: String
    }

    static let maximumDepth = 256

    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0
    private var depth = 0

    private init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// Parses one complete JSON document (surrounding whitespace allowed, a UTF-8 BOM tolerated).
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws(Failure) -> JSONValue {
        var parser = JSONParser(bytes: bytes)
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { parser.index = 3 }
        parser.skipWhitespace()
        if parser.index >= bytes.count {
            throw Failure(offset: parser.index, message: bytes.isEmpty ? "empty body" : "only whitespace")
        }
        let value = try parser.parseValue()
        parser.skipWhitespace()
        if parser.index < bytes.count {
            throw Failure(offset: parser.index, message: "unexpected data after the JSON value")
        }
        return value
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private func fail(_ message: String, at offset: Int? = nil) -> Failure {
        Failure(offset: offset ?? index, message: message)
    }

    private func describeByte(at offset: Int) -> String {
        guard offset < bytes.count else { return "end of input (truncated?)" }
        let byte = bytes[offset]
        if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        return "byte 0x" + String(byte, radix: 16, uppercase: true)
    }

    private mutating func parseValue() throws(Failure) -> JSONValue {
        guard index < bytes.count else { throw fail("unexpected end of input (truncated?)") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw fail("unexpected \(describeByte(at: index))")
        }
    }

    private mutating func expectLiteral(_ literal: String) throws(Failure) {
        let start = index
        for byte in literal.utf8 {
            guard index < bytes.count else { throw fail("unexpected end of input (truncated?)") }
            guard bytes[index] == byte else {
                throw fail("invalid literal (expected \(literal))", at: start)
            }
            index += 1
        }
    }

    private mutating func enterContainer() throws(Failure) {
        depth += 1
        if depth > Self.maximumDepth { throw fail("nesting deeper than \(Self.maximumDepth) levels") }
    }

    private mutating func parseObject() throws(Failure) -> JSONValue {
        try enterContainer()
        index += 1  // {
        var members = JSONObject()
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count else { throw fail("unexpected end of input (truncated?)") }
            guard bytes[index] == UInt8(ascii: "\"") else {
                throw fail("expected a member name, found \(describeByte(at: index))")
            }
            let key = try parseString()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                throw fail("expected ':' after member name, found \(describeByte(at: index))")
            }
            index += 1
            skipWhitespace()
            members.appendParsed(key: key, value: try parseValue())
            skipWhitespace()
            guard index < bytes.count else { throw fail("unexpected end of input (truncated?)") }
            switch bytes[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                depth -= 1
                return .object(members)
            default: throw fail("expected ',' or '}', found \(describeByte(at: index))")
            }
        }
    }

    private mutating func parseArray() throws(Failure) -> JSONValue {
        try enterContainer()
        index += 1  // [
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue())
            skipWhitespace()
            guard index < bytes.count else { throw fail("unexpected end of input (truncated?)") }
            switch bytes[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                depth -= 1
                return .array(elements)
            default: throw fail("expected ',' or ']', found \(describeByte(at: index))")
            }
        }
    }

    private mutating func parseNumber() throws(Failure) -> String {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count else { throw fail("unexpected end of input (truncated?)") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else if isDigit(bytes[index]) {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        } else {
            throw fail("invalid number")
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw fail("invalid number: digit expected") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard index < bytes.count, isDigit(bytes[index]) else { throw fail("invalid number: exponent expected") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func parseString() throws(Failure) -> String {
        let start = index
        index += 1  // opening quote
        let contentStart = index
        // Fast path: no escapes.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[contentStart..<index]), as: UTF8.self)
                index += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw fail("control character in string") }
            index += 1
        }
        guard index < bytes.count else { throw fail("unterminated string (truncated?)", at: start) }
        // Slow path: decode escapes.
        var scratch: [UInt8] = Array(UnsafeBufferPointer(rebasing: bytes[contentStart..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return String(decoding: scratch, as: UTF8.self)
            }
            if byte < 0x20 { throw fail("control character in string") }
            if byte != UInt8(ascii: "\\") {
                scratch.append(byte)
                index += 1
                continue
            }
            index += 1
            guard index < bytes.count else { break }
            let escape = bytes[index]
            index += 1
            switch escape {
            case UInt8(ascii: "\""): scratch.append(0x22)
            case UInt8(ascii: "\\"): scratch.append(0x5C)
            case UInt8(ascii: "/"): scratch.append(0x2F)
            case UInt8(ascii: "b"): scratch.append(0x08)
            case UInt8(ascii: "f"): scratch.append(0x0C)
            case UInt8(ascii: "n"): scratch.append(0x0A)
            case UInt8(ascii: "r"): scratch.append(0x0D)
            case UInt8(ascii: "t"): scratch.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try parseHex4()
                if (0xD800...0xDBFF).contains(scalar), index + 1 < bytes.count,
                    bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
                {
                    let save = index
                    index += 2
                    let low = try parseHex4()
                    if (0xDC00...0xDFFF).contains(low) {
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else {
                        index = save
                    }
                }
                let character = Unicode.Scalar(scalar) ?? "\u{FFFD}"
                scratch.append(contentsOf: Array(String(character).utf8))
            default:
                throw fail("invalid escape sequence", at: index - 2)
            }
        }
        throw fail("unterminated string (truncated?)", at: start)
    }

    private mutating func parseHex4() throws(Failure) -> UInt32 {
        guard index + 4 <= bytes.count else { throw fail("unexpected end of input in \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw fail("invalid hex digit in \\u escape")
            }
            value = value * 16 + digit
            index += 1
        }
        return value
    }
}

extension JSONParser {
    /// Parses any byte collection, using its contiguous storage when it has one.
    static func parse(bytes: some Collection<UInt8>) throws(Failure) -> JSONValue {
        let result: Result<JSONValue, Failure>? = bytes.withContiguousStorageIfAvailable { buffer in
            do throws(Failure) { return .success(try parse(buffer)) } catch { return .failure(error) }
        }
        if let result { return try result.get() }
        let copy = Array(bytes)
        let fallback: Result<JSONValue, Failure> = copy.withUnsafeBufferPointer { buffer in
            do throws(Failure) { return .success(try parse(buffer)) } catch { return .failure(error) }
        }
        return try fallback.get()
    }
}
