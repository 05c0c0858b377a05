import Foundation

/// A compact JWS split into its three parts, nothing verified yet.
///
/// `header.payload.signature`, each base64url; the signature covers the ASCII bytes of `header.payload`.
/// The header is decoded only when the chain cache does not already know it (it is the cache's key).
struct CompactJWS {
    /// The header part as sent (base64url).
    let headerText: Substring
    let payloadJSON: [UInt8]
    let signature: [UInt8]
    /// The bytes the signature covers.
    let signingInput: Substring.UTF8View

    /// Splits and decodes the payload and the signature; `malformed` for anything that is not three
    /// base64url parts.
    init(_ text: String) throws(SignedDataError) {
        let trimmed = Self.trimmed(text)
        var dots: [Substring.Index] = []
        for index in trimmed.utf8.indices where trimmed.utf8[index] == UInt8(ascii: ".") {
            dots.append(index)
            if dots.count > 2 { break }
        }
        guard dots.count == 2 else {
            throw SignedDataError(
                .malformed,
                "a compact JWS has 3 dot-separated parts, this has \(dots.count > 2 ? "more" : "\(dots.count + 1)")"
            )
        }
        let header = trimmed[trimmed.startIndex..<dots[0]]
        let payload = trimmed[trimmed.utf8.index(after: dots[0])..<dots[1]]
        let signaturePart = trimmed[trimmed.utf8.index(after: dots[1])...]
        guard !header.isEmpty else { throw SignedDataError(.malformed, "the header is empty") }
        guard !payload.isEmpty, let payloadBytes = Base64URL.decode(payload) else {
            throw SignedDataError(.malformed, "the payload is not base64url")
        }
        guard let signatureBytes = Base64URL.decode(signaturePart) else {
            throw SignedDataError(.malformed, "the signature is not base64url")
        }
        headerText = header
        payloadJSON = payloadBytes
        signature = signatureBytes
        signingInput = trimmed[trimmed.startIndex..<dots[1]].utf8
    }

    /// The header's JSON bytes; `malformed` when it is not base64url.
    func headerJSON() throws(SignedDataError) -> [UInt8] {
        guard let bytes = Base64URL.decode(headerText) else {
            throw SignedDataError(.malformed, "the header is not base64url")
        }
        return bytes
    }

    /// Without leading and trailing ASCII whitespace (a JWS read from a file ends with a newline).
    static func trimmed(_ text: String) -> Substring {
        var slice = Substring(text)
        while let first = slice.utf8.first, first == 0x20 || (0x09...0x0D).contains(first) { slice = slice.dropFirst() }
        while let last = slice.utf8.last, last == 0x20 || (0x09...0x0D).contains(last) { slice = slice.dropLast() }
        return slice
    }
}
