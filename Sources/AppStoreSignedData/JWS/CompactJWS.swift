import Foundation

/// A compact JWS split into its three parts and decoded, nothing verified yet.
///
/// `header.payload.signature`, each base64url; the signature covers the ASCII bytes of `header.payload`.
struct CompactJWS {
    let headerJSON: [UInt8]
    let payloadJSON: [UInt8]
    let signature: [UInt8]
    /// The bytes the signature covers.
    let signingInput: Substring.UTF8View

    /// Splits and decodes; `malformed` for anything that is not three base64url parts.
    init(_ text: String) throws(SignedDataError) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        let parts = trimmed.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else {
            throw SignedDataError(.malformed, "a compact JWS has 3 dot-separated parts, this has \(parts.count)")
        }
        guard !parts[0].isEmpty, let header = Base64URL.decode(parts[0]) else {
            throw SignedDataError(.malformed, "the header is not base64url")
        }
        guard !parts[1].isEmpty, let payload = Base64URL.decode(parts[1]) else {
            throw SignedDataError(.malformed, "the payload is not base64url")
        }
        guard let signature = Base64URL.decode(parts[2]) else {
            throw SignedDataError(.malformed, "the signature is not base64url")
        }
        headerJSON = header
        payloadJSON = payload
        self.signature = signature
        let end = parts[1].endIndex
        signingInput = trimmed[trimmed.startIndex..<end].utf8
    }
}
