import Foundation

/// The JSON body of a verifyReceipt request: `receipt-data`, `password`, `exclude-old-transactions`.
/// Written by hand (the pipeline builds thousands per second) with full JSON string escaping, so a
/// stored receipt holding quotes, backslashes or control characters still produces valid JSON.
public enum VerifyReceiptRequestBody {
    public static func encode(receipt: String, password: String?, excludeOldTransactions: Bool) -> Data {
        var out = [UInt8]()
        out.reserveCapacity(receipt.utf8.count + 128)
        out.append(contentsOf: Array(#"{"receipt-data":""#.utf8))
        appendEscaped(receipt, to: &out)
        out.append(UInt8(ascii: "\""))
        if let password {
            out.append(contentsOf: Array(#","password":""#.utf8))
            appendEscaped(password, to: &out)
            out.append(UInt8(ascii: "\""))
        }
        out.append(contentsOf: Array(#","exclude-old-transactions":"#.utf8))
        out.append(contentsOf: Array((excludeOldTransactions ? "true" : "false").utf8))
        out.append(UInt8(ascii: "}"))
        return Data(out)
    }

    static func appendEscaped(_ string: String, to out: inout [UInt8]) {
        // Fast path: a receipt is base64 and needs no escaping; copy it in one go (appending byte by byte
        // was about 4% of a run's CPU time).
        var copy = string
        let copied = copy.withUTF8 { bytes -> Bool in
            guard !bytes.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) else { return false }
            out.append(contentsOf: bytes)
            return true
        }
        if copied { return }
        let hex: [UInt8] = Array("0123456789abcdef".utf8)
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: [0x5C, 0x22])
            case UInt8(ascii: "\\"): out.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: out.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0..<0x20:
                out.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default: out.append(byte)
            }
        }
    }
}
