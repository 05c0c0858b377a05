import Crypto
import Foundation

/// Checks the `Authorization: Bearer <JWT>` of a request as Apple does (docs/simulator.md, "Authentication"): header
/// `alg` ES256 and `kid` the key's id; claims `iss` the issuer id, `aud` appstoreconnect-v1, `iat` not in the future,
/// `exp` in the future; an ES256 (r||s) signature by the key. For the App Store Server API (`Scope.serverAPI`) the key
/// is the In-App Purchase key, `bid` must be the bundle id and `exp` at most 60 minutes after `iat`; for the App Store
/// Connect API's reports (`Scope.appStoreConnect`) the key is the team key, there is no `bid`, and `exp` is at most
/// 20 minutes after `iat`. Any defect is HTTP 401.
///
/// Times are the real clock, whatever `--now` says: clients sign tokens with their own clock.
public struct APITokenAuthenticator: Sendable {
    /// Why a token was refused; the raw value is the `/_stats` key. Never carries the token itself.
    public enum Failure: String, Sendable, CaseIterable {
        case missing, malformed, algorithm
        case keyId = "kid"
        case issuer = "iss"
        case audience = "aud"
        case bundleId = "bid"
        case expired
        case notYetValid = "iat_in_future"
        case lifetime = "exp_over_60_minutes"
        case connectLifetime = "exp_over_20_minutes"
        case signature
    }

    /// Which API the tokens are for.
    public enum Scope: Sendable {
        case serverAPI, appStoreConnect
    }

    /// A verified token and the instant (ms) it stops being valid, for reuse on the same connection.
    public struct Accepted: Sendable {
        public var token: [UInt8]
        public var expires: Int64
    }

    public static let maxLifetimeSeconds: Int64 = 3600
    /// The App Store Connect API's longest token.
    public static let maxConnectLifetimeSeconds: Int64 = 1200
    /// Allowance for clocks that run a little ahead of the simulator's.
    public static let skewSeconds: Int64 = 60

    let publicKey: P256.Signing.PublicKey
    let keyId: String
    let issuerId: String
    /// The required `bid`, or nil when the scope forbids one.
    let bundleId: String?

    public init(identity: ServerAPIIdentity, scope: Scope = .serverAPI) {
        issuerId = identity.issuerId
        switch scope {
        case .serverAPI:
            publicKey = identity.apiKey.publicKey
            keyId = identity.keyId
            bundleId = identity.bundleId
        case .appStoreConnect:
            publicKey = identity.teamKey.publicKey
            keyId = identity.teamKeyId
            bundleId = nil
        }
    }

    /// Checks the header value (`Bearer <JWT>`) at `now` (ms).
    public func check(authorization: String?, now: Int64) -> Result<Accepted, FailureBox> {
        guard let authorization, authorization.hasPrefix("Bearer ") else { return .failure(FailureBox(.missing)) }
        let token = Array(authorization.utf8.dropFirst(7))
        if let failure = failure(token: token, now: now) { return .failure(FailureBox(failure)) }
        let exp = Self.claims(token)?["exp"] as? NSNumber
        return .success(Accepted(token: token, expires: (exp?.int64Value ?? 0) * 1000))
    }

    /// `Failure` as an `Error` for `Result`.
    public struct FailureBox: Error, Sendable {
        public var failure: Failure
        init(_ f: Failure) { failure = f }
    }

    private static func segments(_ token: [UInt8]) -> [ArraySlice<UInt8>]? {
        let parts = token.split(separator: 46, omittingEmptySubsequences: false)
        return parts.count == 3 ? parts : nil
    }

    private static func object(_ segment: ArraySlice<UInt8>) -> [String: Any]? {
        guard let bytes = Base64URL.decode(segment) else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any]
    }

    private static func claims(_ token: [UInt8]) -> [String: Any]? {
        segments(token).flatMap { object($0[1]) }
    }

    func failure(token: [UInt8], now: Int64) -> Failure? {
        guard let parts = Self.segments(token), let header = Self.object(parts[0]), let claims = Self.object(parts[1]),
            let signature = Base64URL.decode(parts[2])
        else { return .malformed }
        guard header["alg"] as? String == "ES256" else { return .algorithm }
        guard header["kid"] as? String == keyId else { return .keyId }
        guard claims["iss"] as? String == issuerId else { return .issuer }
        let audience = claims["aud"]
        guard
            audience as? String == ServerAPIIdentity.audience
                || (audience as? [String]) == [ServerAPIIdentity.audience]
        else { return .audience }
        guard claims["bid"] as? String == bundleId else { return .bundleId }
        return timesAndSignature(token: token, parts: parts, claims: claims, signature: signature, now: now)
    }

    private func timesAndSignature(
        token: [UInt8],
        parts: [ArraySlice<UInt8>],
        claims: [String: Any],
        signature: [UInt8],
        now: Int64
    ) -> Failure? {
        guard let iat = (claims["iat"] as? NSNumber)?.int64Value, let exp = (claims["exp"] as? NSNumber)?.int64Value
        else { return .malformed }
        let nowSeconds = now / 1000
        guard exp > nowSeconds else { return .expired }
        guard iat <= nowSeconds + Self.skewSeconds else { return .notYetValid }
        if bundleId == nil {
            guard exp - iat <= Self.maxConnectLifetimeSeconds else { return .connectLifetime }
        } else {
            guard exp - iat <= Self.maxLifetimeSeconds else { return .lifetime }
        }
        guard let sig = try? P256.Signing.ECDSASignature(rawRepresentation: signature),
            publicKey.isValidSignature(sig, for: Array(token[..<parts[1].endIndex]))
        else { return .signature }
        return nil
    }
}
