import Crypto
import Foundation
import Synchronization

/// Signs API tokens (ES256 JWT) for the App Store Server API or the App Store Connect API (`APITokenScope`) and
/// reuses each until shortly before it expires.
///
/// Header `{"alg":"ES256","kid":...,"typ":"JWT"}`; claims `iss` (issuer id), `iat`, `exp` (default 5 minutes after
/// `iat`; at most 60 for the Server API, 20 for App Store Connect), `aud` = `appstoreconnect-v1`, and for the Server
/// API `bid` (bundle id). Thread-safe.
public final class APITokenSigner: Sendable {
    public static let audience = "appstoreconnect-v1"

    public let keyId: String
    public let issuerId: String
    public let scope: APITokenScope
    /// `exp - iat`, in seconds.
    public let lifetime: TimeInterval
    /// A token is signed anew once fewer than this many seconds of it remain.
    public let renewalMargin: TimeInterval
    private let key: APIPrivateKey
    private let clock: @Sendable () -> Date
    private let current = Mutex<APIToken?>(nil)

    /// - Throws: `APIKeyError` when the lifetime is not in 1 second to the scope's maximum or an id is empty.
    public init(
        key: APIPrivateKey,
        keyId: String,
        issuerId: String,
        scope: APITokenScope,
        lifetime: TimeInterval = 300,
        renewalMargin: TimeInterval = 60,
        clock: @escaping @Sendable () -> Date = { Date() }
    ) throws(APIKeyError) {
        let maximum = scope.maximumLifetime
        guard lifetime >= 1, lifetime <= maximum else {
            throw APIKeyError(
                "token lifetime \(Int(lifetime)) s is outside 1...\(Int(maximum)) s (Apple's limit is \(Int(maximum) / 60) minutes)"
            )
        }
        var ids = [("key id", keyId), ("issuer id", issuerId)]
        if case .appStoreServer(let bundleId) = scope { ids.append(("bundle id", bundleId)) }
        for (name, value) in ids where value.isEmpty {
            throw APIKeyError("the \(name) is empty")
        }
        self.key = key
        self.keyId = keyId
        self.issuerId = issuerId
        self.scope = scope
        self.lifetime = lifetime
        self.renewalMargin = min(max(0, renewalMargin), lifetime / 2)
        self.clock = clock
    }

    /// The key's public half, to check tokens with.
    public var publicKey: P256.Signing.PublicKey { key.publicKey }

    /// The current token, signed anew only when none is held or fewer than `renewalMargin` seconds remain.
    public func token() -> APIToken {
        let now = clock()
        return current.withLock { held in
            if let token = held, token.expiresAt.timeIntervalSince(now) > renewalMargin, token.issuedAt <= now {
                return token
            }
            let token = sign(at: now)
            held = token
            return token
        }
    }

    /// Signs a fresh token issued at `now` (whole seconds).
    public func sign(at now: Date) -> APIToken {
        let issuedAt = Int64(now.timeIntervalSince1970.rounded(.down))
        let expiresAt = issuedAt + Int64(lifetime)
        let header = #"{"alg":"ES256","kid":\#(Self.jsonString(keyId)),"typ":"JWT"}"#
        var claims =
            #"{"iss":\#(Self.jsonString(issuerId)),"iat":\#(issuedAt),"exp":\#(expiresAt),"aud":"\#(Self.audience)""#
        if case .appStoreServer(let bundleId) = scope { claims += #","bid":\#(Self.jsonString(bundleId))"# }
        claims += "}"
        let signingInput = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(claims.utf8))
        // ECDSA over P-256 with SHA-256 cannot fail for a valid key and in-memory data.
        guard let signature = try? key.key.signature(for: Data(signingInput.utf8)) else {
            preconditionFailure("P-256 signing failed")
        }
        return APIToken(
            value: signingInput + "." + Base64URL.encode(signature.rawRepresentation),
            issuedAt: Date(timeIntervalSince1970: TimeInterval(issuedAt)),
            expiresAt: Date(timeIntervalSince1970: TimeInterval(expiresAt))
        )
    }

    /// A JSON string literal (quotes, backslashes and control characters escaped).
    static func jsonString(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    out += String(format: "\\u%04x", scalar.value)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
