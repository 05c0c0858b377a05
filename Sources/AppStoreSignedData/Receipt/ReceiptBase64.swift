import Foundation

/// Base64 as apps store receipts: standard alphabet, padding optional, base64url tolerated.
enum ReceiptBase64 {
    static func decode(_ text: String) -> [UInt8]? {
        var standard = String()
        standard.reserveCapacity(text.utf8.count + 3)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "-": standard.append("+")
            case "_": standard.append("/")
            case "=": continue
            case "A"..."Z", "a"..."z", "0"..."9", "+", "/": standard.unicodeScalars.append(scalar)
            default: return nil
            }
        }
        let remainder = standard.utf8.count % 4
        if remainder == 1 { return nil }
        if remainder > 0 { standard += String(repeating: "=", count: 4 - remainder) }
        return Data(base64Encoded: standard).map { [UInt8]($0) }
    }
}
