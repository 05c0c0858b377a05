import Crypto
import Foundation

@testable import AppStoreSimulator

/// The test client's App Store Server API token (JWT, ES256), with knobs to break each claim.
struct TestAPIToken: Sendable {
    var key: P256.Signing.PrivateKey
    var keyId: String
    var issuerId: String
    /// The `bid` claim; nil leaves it out (the App Store Connect API's tokens).
    var bundleId: String?
    var audience = "appstoreconnect-v1"
    var alg = "ES256"
    var issuedAt = Int64(Date().timeIntervalSince1970)
    var lifetime: Int64 = 300
    /// Signs with this key instead of `key` (a bad signature).
    var signingKey: P256.Signing.PrivateKey?

    /// From the exported `server-api/` files' contents.
    init(p8: String, apiJSON: [String: Any]) throws {
        key = try P256.Signing.PrivateKey(pemRepresentation: p8)
        keyId = apiJSON["key_id"] as? String ?? ""
        issuerId = apiJSON["issuer_id"] as? String ?? ""
        bundleId = apiJSON["bundle_id"] as? String ?? ""
    }

    /// The App Store Connect API token of a simulator's team key: no `bid`.
    init(connect identity: ServerAPIIdentity) {
        key = identity.teamKey
        keyId = identity.teamKeyId
        issuerId = identity.issuerId
        bundleId = nil
    }

    var jwt: String {
        let header = #"{"alg":"\#(alg)","kid":"\#(keyId)","typ":"JWT"}"#
        let claims =
            #"{"iss":"\#(issuerId)","iat":\#(issuedAt),"exp":\#(issuedAt + lifetime),"#
            + #""aud":"\#(audience)""# + (bundleId.map { #","bid":"\#($0)""# } ?? "") + "}"
        let input = Self.b64(Array(header.utf8)) + "." + Self.b64(Array(claims.utf8))
        // Signing in-memory bytes with a valid P-256 key cannot fail.
        let signature = try! (signingKey ?? key).signature(for: Array(input.utf8))
        return input + "." + Self.b64(Array(signature.rawRepresentation))
    }

    var authorization: (String, String) { ("Authorization", "Bearer " + jwt) }

    static func b64(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
