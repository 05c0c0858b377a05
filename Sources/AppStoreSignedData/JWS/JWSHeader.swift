/// The protected header of an App Store JWS: the algorithm and the certificate chain (leaf first).
public struct JWSHeader: Sendable, Equatable, Decodable {
    /// Must be `ES256`.
    public var alg: String?
    /// Base64 (not base64url) DER certificates: leaf, intermediate, root.
    public var x5c: [String]?
    public var kid: String?
    public var typ: String?

    public init(alg: String?, x5c: [String]?, kid: String? = nil, typ: String? = nil) {
        self.alg = alg
        self.x5c = x5c
        self.kid = kid
        self.typ = typ
    }
}
