import Crypto

/// Compact JWS, ES256, the way the App Store signs its payloads (docs/simulator.md, "The Server API"):
/// header `{"alg":"ES256","x5c":[leaf, intermediate, root]}` (base64 DER), payload, raw r||s signature.
struct JWSSigner: Sendable {
    let key: P256.Signing.PrivateKey
    /// `base64url(header) + "."`, computed once.
    let headerPrefix: [UInt8]

    init(key: P256.Signing.PrivateKey, chain: [[UInt8]]) {
        self.key = key
        var header = #"{"alg":"ES256","x5c":["#
        header += chain.map { "\"" + String(decoding: Base64.encode($0), as: UTF8.self) + "\"" }
            .joined(separator: ",")
        header += "]}"
        headerPrefix = Base64URL.encode(Array(header.utf8)) + [46]
    }

    /// Signs `payload`, then replaces the payload segment with `payload` whose `expiresDate` says 2100 (the
    /// signature no longer matches).
    func signTampered(payload: [UInt8]) -> String {
        let signed = Array(sign(payload: payload).utf8)
        let parts = signed.split(separator: 46, omittingEmptySubsequences: false)
        var changed = payload
        if changed.last == 125 { changed.removeLast() }
        changed += Array(#","expiresDate":4102444800000}"#.utf8)
        let out = Array(parts[0]) + [46] + Base64URL.encode(changed) + [46] + Array(parts[2])
        return String(decoding: out, as: UTF8.self)
    }

    /// `header.payload.signature`.
    func sign(payload: [UInt8]) -> String {
        var input = headerPrefix
        input += Base64URL.encode(payload)
        // Signing bytes in memory with a valid P-256 key cannot fail.
        let signature = try! key.signature(for: input)
        input.append(46)
        input += Base64URL.encode(Array(signature.rawRepresentation))
        return String(decoding: input, as: UTF8.self)
    }
}
