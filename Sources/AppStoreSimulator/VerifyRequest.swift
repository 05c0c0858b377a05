#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The three fields of a verifyReceipt request body, read by a small JSON scanner.
///
/// Accepts any key order and whitespace, unescapes strings (`\/` in base64 from Apple clients,
/// `\uXXXX`), skips unknown members of any type. `exclude-old-transactions` may be a boolean or the
/// string "true". Returns nil when the body is not a JSON object (Apple: 21000).
public struct VerifyRequest: Sendable, Equatable {
    public var receiptData: [UInt8]?
    public var password: [UInt8]?
    public var excludeOldTransactions: Bool

    public static func parse(_ body: UnsafeRawBufferPointer) -> VerifyRequest? {
        var scanner = JSONScanner(bytes: body)
        return scanner.parseRequest()
    }

    public static func parse(_ body: [UInt8]) -> VerifyRequest? {
        body.withUnsafeBytes { parse($0) }
    }
}

/// Byte-level JSON scanner for `VerifyRequest`; depth-limited so hostile input cannot recurse forever.
struct JSONScanner {
    let bytes: UnsafeRawBufferPointer
    var i = 0

    init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    private mutating func skipWhitespace() {
        while i < bytes.count, bytes[i] == 32 || bytes[i] == 9 || bytes[i] == 10 || bytes[i] == 13 { i += 1 }
    }

    private mutating func expect(_ c: UInt8) -> Bool {
        skipWhitespace()
        guard i < bytes.count, bytes[i] == c else { return false }
        i += 1
        return true
    }

    private static func hexValue(_ c: UInt8) -> UInt32? {
        switch c {
        case 48...57: return UInt32(c - 48)
        case 65...70: return UInt32(c - 55)
        case 97...102: return UInt32(c - 87)
        default: return nil
        }
    }

    /// Reads a string (opening quote at `i`), returning its unescaped UTF-8 bytes.
    mutating func readString() -> [UInt8]? {
        guard expect(34) else { return nil }
        // Fast path: no escapes before the closing quote, copy the run in one go.
        var j = i
        if let base = bytes.baseAddress, i < bytes.count {
            // memchr is vectorised; base64 payloads are thousands of bytes.
            let quote = memchr(base + i, 34, bytes.count - i).map { $0 - UnsafeMutableRawPointer(mutating: base) }
            let end = quote ?? bytes.count
            let slash = memchr(base + i, 92, end - i).map { $0 - UnsafeMutableRawPointer(mutating: base) }
            j = slash ?? end
        }
        if j < bytes.count, bytes[j] == 34 {
            let run = Array(UnsafeRawBufferPointer(rebasing: bytes[i..<j]))
            i = j + 1
            return run
        }
        var out: [UInt8] = Array(UnsafeRawBufferPointer(rebasing: bytes[i..<j]))
        i = j
        while i < bytes.count {
            let c = bytes[i]
            i += 1
            if c == 34 { return out }
            if c != 92 {
                out.append(c)
                continue
            }
            guard i < bytes.count else { return nil }
            let e = bytes[i]
            i += 1
            switch e {
            case 34, 92, 47: out.append(e)
            case 98: out.append(8)
            case 102: out.append(12)
            case 110: out.append(10)
            case 114: out.append(13)
            case 116: out.append(9)
            case 117:
                guard i + 4 <= bytes.count else { return nil }
                var v: UInt32 = 0
                for k in 0..<4 {
                    guard let h = Self.hexValue(bytes[i + k]) else { return nil }
                    v = v << 4 | h
                }
                i += 4
                // Surrogates are not expected in these fields; encode what we have as UTF-8.
                let scalar = Unicode.Scalar(v) ?? "\u{FFFD}"
                out += Array(String(Character(scalar)).utf8)
            default: return nil
            }
        }
        return nil
    }

    /// Skips any JSON value; false when malformed.
    mutating func skipValue(depth: Int = 0) -> Bool {
        guard depth < 64 else { return false }
        skipWhitespace()
        guard i < bytes.count else { return false }
        switch bytes[i] {
        case 34: return readString() != nil
        case 123:
            i += 1
            skipWhitespace()
            if i < bytes.count, bytes[i] == 125 {
                i += 1
                return true
            }
            while true {
                guard readString() != nil, expect(58), skipValue(depth: depth + 1) else { return false }
                skipWhitespace()
                guard i < bytes.count else { return false }
                if bytes[i] == 44 {
                    i += 1
                    continue
                }
                if bytes[i] == 125 {
                    i += 1
                    return true
                }
                return false
            }
        case 91:
            i += 1
            skipWhitespace()
            if i < bytes.count, bytes[i] == 93 {
                i += 1
                return true
            }
            while true {
                guard skipValue(depth: depth + 1) else { return false }
                skipWhitespace()
                guard i < bytes.count else { return false }
                if bytes[i] == 44 {
                    i += 1
                    continue
                }
                if bytes[i] == 93 {
                    i += 1
                    return true
                }
                return false
            }
        default:
            let start = i
            while i < bytes.count {
                let c = bytes[i]
                let isLiteral =
                    (c >= 48 && c <= 57) || (c >= 97 && c <= 122) || c == 45 || c == 43 || c == 46 || c == 69
                if !isLiteral { break }
                i += 1
            }
            guard i > start else { return false }
            let word = Array(UnsafeRawBufferPointer(rebasing: bytes[start..<i]))
            if word == Array("true".utf8) || word == Array("false".utf8) || word == Array("null".utf8) { return true }
            return word.first.map { $0 == 45 || ($0 >= 48 && $0 <= 57) } ?? false
        }
    }

    mutating func parseRequest() -> VerifyRequest? {
        var request = VerifyRequest(receiptData: nil, password: nil, excludeOldTransactions: false)
        guard expect(123) else { return nil }
        skipWhitespace()
        if i < bytes.count, bytes[i] == 125 {
            i += 1
            return trailingOK() ? request : nil
        }
        while true {
            guard let key = readString(), expect(58) else { return nil }
            skipWhitespace()
            guard i < bytes.count else { return nil }
            switch key {
            case Array("receipt-data".utf8):
                if bytes[i] == 34 {
                    guard let v = readString() else { return nil }
                    request.receiptData = v
                } else {
                    guard skipValue() else { return nil }
                }
            case Array("password".utf8):
                if bytes[i] == 34 {
                    guard let v = readString() else { return nil }
                    request.password = v
                } else {
                    guard skipValue() else { return nil }
                }
            case Array("exclude-old-transactions".utf8):
                if bytes[i] == 34 {
                    guard let v = readString() else { return nil }
                    request.excludeOldTransactions = v == Array("true".utf8) || v == Array("1".utf8)
                } else {
                    let start = i
                    guard skipValue() else { return nil }
                    request.excludeOldTransactions = bytes[start] == 116 || bytes[start] == 49
                }
            default:
                guard skipValue() else { return nil }
            }
            skipWhitespace()
            guard i < bytes.count else { return nil }
            if bytes[i] == 44 {
                i += 1
                continue
            }
            if bytes[i] == 125 {
                i += 1
                break
            }
            return nil
        }
        return trailingOK() ? request : nil
    }

    private mutating func trailingOK() -> Bool {
        skipWhitespace()
        return i == bytes.count
    }
}
