/// Why a signed payload (a JWS from the App Store) was refused. Every refusal has a named code; the
/// `detail` names what was wrong (a field, a certificate's position, a bundle id) and never holds the
/// JWS itself, a key or a signature. See docs/signed-data.md for the order of the checks.
public struct SignedDataError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The refusal's name, as printed by `explain --jws` (`reason`).
    public enum Code: String, Sendable, Equatable, CaseIterable {
        /// Not a compact JWS, not base64url, not JSON, or a field of the wrong type.
        case malformed = "malformed"
        /// The header's `alg` is not `ES256` (`none`, `HS256`, `RS256`, ...: algorithm confusion).
        case wrongAlgorithm = "wrong_algorithm"
        /// `x5c` does not hold exactly three certificates, a certificate does not parse, or the chain does
        /// not build and verify to a trusted root.
        case chainInvalid = "chain_invalid"
        /// The intermediate lacks OID 1.2.840.113635.100.6.2.1 or the leaf lacks 1.2.840.113635.100.6.11.1.
        case missingAppleOID = "missing_apple_oid"
        /// A certificate of the chain had expired at the validation time (the payload's `signedDate`).
        case certificateExpiredAtSignedDate = "certificate_expired_at_signed_date"
        /// A certificate of the chain was not yet valid at the validation time (the payload's `signedDate`).
        case certificateNotYetValidAtSignedDate = "certificate_not_yet_valid_at_signed_date"
        /// The ES256 signature does not verify with the leaf's key (or is not 64 raw bytes).
        case badSignature = "bad_signature"
        /// The payload's `bundleId` is not the configured one.
        case bundleMismatch = "bundle_mismatch"
        /// The payload's `environment` is not the configured one.
        case environmentMismatch = "environment_mismatch"
        /// A production payload's `appAppleId` is not the configured one.
        case appAppleIdMismatch = "app_apple_id_mismatch"
    }

    public let code: Code
    public let detail: String

    public init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    public var description: String { "\(code.rawValue): \(detail)" }
}
