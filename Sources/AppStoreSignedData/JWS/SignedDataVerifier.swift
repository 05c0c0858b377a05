import Crypto
import Foundation
@_spi(FixedExpiryValidationTime) import X509

/// Verifies App Store signed data (compact JWS with an x5c chain) the way Apple's own libraries do, offline.
///
/// In order (docs/signed-data.md): three base64url parts; header `alg` = ES256; `x5c` of exactly three
/// certificates; the payload is a JSON object (its `signedDate` is the validation time); Apple's OIDs on
/// the intermediate and the leaf; each certificate valid at the validation time; the chain leaf ->
/// intermediate -> a trusted root verified by swift-certificates (RFC 5280); the ES256 signature (raw
/// r||s) with the leaf's key; then the payload's bundle id, environment and (production) App Apple ID.
/// Verified chains are cached (`ChainCache`). Every refusal is a `SignedDataError` with a named code.
public struct SignedDataVerifier: Sendable {
    /// The instant the chain's validity is checked at.
    public enum ValidationTime: Sendable, Equatable {
        /// The payload's `signedDate` (the default, as Apple's libraries do offline); "now" when absent.
        case signedDate
        /// The current time: an old stored JWS fails once its leaf has expired.
        case now
        /// A fixed instant.
        case fixed(Date)
    }

    /// What a payload must match. Nil members are not checked.
    public struct Options: Sendable {
        public var bundleId: String?
        public var environment: AppStoreEnvironment?
        /// Checked for production payloads that carry an `appAppleId` field (notifications).
        public var appAppleId: Int64?
        public var validationTime: ValidationTime

        public init(
            bundleId: String? = nil,
            environment: AppStoreEnvironment? = nil,
            appAppleId: Int64? = nil,
            validationTime: ValidationTime = .signedDate
        ) {
            self.bundleId = bundleId
            self.environment = environment
            self.appAppleId = appAppleId
            self.validationTime = validationTime
        }
    }

    public let roots: TrustedRoots
    public let options: Options
    public let cache: ChainCache
    private let store: CertificateStore

    public init(roots: TrustedRoots = .apple, options: Options = Options(), cache: ChainCache = ChainCache()) {
        self.roots = roots
        self.options = options
        self.cache = cache
        self.store = CertificateStore(roots.certificates)
    }

    // MARK: Typed entry points

    public func verifyTransaction(_ jws: String) throws(SignedDataError) -> JWSTransactionDecodedPayload {
        try verifyAndDecode(jws, as: JWSTransactionDecodedPayload.self)
    }

    public func verifyRenewalInfo(_ jws: String) throws(SignedDataError) -> JWSRenewalInfoDecodedPayload {
        try verifyAndDecode(jws, as: JWSRenewalInfoDecodedPayload.self)
    }

    public func verifyNotification(_ jws: String) throws(SignedDataError) -> ResponseBodyV2DecodedPayload {
        try verifyAndDecode(jws, as: ResponseBodyV2DecodedPayload.self)
    }

    /// Verifies the JWS, decodes its payload as `type` and checks the payload's claims.
    public func verifyAndDecode<T: SignedPayload>(_ jws: String, as type: T.Type) throws(SignedDataError) -> T {
        let verified = try verify(jws)
        let payload = try PayloadDecoder.decode(type, from: verified.payload)
        try payload.checkClaims(options)
        return payload
    }

    // MARK: Signature and chain

    /// Verifies the chain and the signature (not the payload's claims: see `verifyAndDecode`).
    public func verify(_ jws: String) throws(SignedDataError) -> VerifiedJWS {
        let parts = try CompactJWS(jws)
        // The header (alg and x5c) is the cache key: a header seen before passed steps 2, 3, 5, 6 and 8.
        let key = String(parts.headerText)
        let cached = cache.lookup(key)
        var x5c: [String] = []
        if cached == nil {
            let header = try Self.decodeHeader(try parts.headerJSON())
            guard header.alg == "ES256" else {
                throw SignedDataError(
                    .wrongAlgorithm,
                    "alg is \(header.alg.map { "\"\($0)\"" } ?? "absent"), not ES256"
                )
            }
            guard let chain = header.x5c else { throw SignedDataError(.chainInvalid, "the header has no x5c chain") }
            guard chain.count == 3 else {
                throw SignedDataError(
                    .chainInvalid,
                    "x5c holds \(chain.count) certificates, not 3 (leaf, intermediate, root)"
                )
            }
            x5c = chain
        }
        let signedDate = try Self.signedDate(parts.payloadJSON)
        let (time, timeName) = validationTime(signedDate: signedDate)

        let chain: VerifiedChain
        if let cached {
            if let refusal = cached.refusal(at: time, timeName: timeName) { throw refusal }
            chain = cached
        } else {
            chain = try verifyChain(x5c, at: time, timeName: timeName)
            cache.insert(chain, for: key)
        }

        guard parts.signature.count == 64,
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: parts.signature)
        else {
            throw SignedDataError(
                .badSignature,
                "the signature is \(parts.signature.count) bytes, not a raw ES256 r||s (64)"
            )
        }
        guard chain.leafKey.isValidSignature(signature, for: Data(parts.signingInput)) else {
            throw SignedDataError(.badSignature, "the ES256 signature does not verify with the leaf certificate's key")
        }
        return VerifiedJWS(
            algorithm: "ES256",
            certificateNames: chain.subjectNames,
            payload: parts.payloadJSON,
            signedDate: signedDate
        )
    }

    private func validationTime(signedDate: Date?) -> (Date, String) {
        switch options.validationTime {
        case .signedDate:
            if let signedDate { return (signedDate, "signedDate") }
            return (Date(), "now (the payload has no signedDate)")
        case .now: return (Date(), "now")
        case .fixed(let date): return (date, "the validation time")
        }
    }

    /// Full verification of a chain not in the cache.
    private func verifyChain(_ x5c: [String], at time: Date, timeName: String) throws(SignedDataError) -> VerifiedChain
    {
        var certificates: [Certificate] = []
        for (index, text) in x5c.enumerated() {
            guard let der = Data(base64Encoded: text), let certificate = try? Certificate(derEncoded: [UInt8](der))
            else {
                throw SignedDataError(.chainInvalid, "x5c[\(index)] is not a base64 DER certificate")
            }
            certificates.append(certificate)
        }
        let leaf = certificates[0]
        let intermediate = certificates[1]
        if let missing = AppleOIDPolicy.missingOID(leaf: leaf, intermediate: intermediate) {
            throw SignedDataError(.missingAppleOID, missing)
        }
        let windows = [VerifiedChain.window("leaf", leaf), VerifiedChain.window("intermediate", intermediate)]
        if let refusal = VerifiedChain.refusal(windows, at: time, timeName: timeName) { throw refusal }

        let store = self.store
        let result = BlockingAsyncRunner.shared.run { () async -> CertificateValidationResult in
            var verifier = Verifier(rootCertificates: store) {
                RFC5280Policy(fixedExpiryValidationTime: time)
                AppleOIDPolicy()
            }
            return await verifier.validate(leaf: leaf, intermediates: CertificateStore([intermediate]))
        }
        let validated: [Certificate]
        switch result {
        case .validCertificate(let chain):
            validated = Array(chain)
        case .couldNotValidate(let failures):
            let reason = failures.first.map { "\($0.policyFailureReason)" } ?? "no path to a trusted root"
            throw SignedDataError(
                .chainInvalid,
                "the chain does not verify to a trusted root (\(roots.certificates.count) trusted): \(reason)"
            )
        }
        guard validated.count == 3 else {
            throw SignedDataError(.chainInvalid, "the verified chain has \(validated.count) certificates, not 3")
        }
        guard let leafKey = P256.Signing.PublicKey(leaf.publicKey) else {
            throw SignedDataError(.chainInvalid, "the leaf certificate's key is not an EC P-256 key")
        }
        return VerifiedChain(
            leafKey: leafKey,
            windows: windows + [VerifiedChain.window("root", validated[2])],
            subjectNames: validated.map(VerifiedChain.commonName)
        )
    }

    // MARK: Inspection without verification (for explain's output)

    static func decodeHeader(_ bytes: [UInt8]) throws(SignedDataError) -> JWSHeader {
        do {
            return try JSONDecoder().decode(JWSHeader.self, from: Data(bytes))
        } catch {
            throw SignedDataError(.malformed, "the header is not a JSON object with string alg and x5c")
        }
    }

    /// The payload's `signedDate`, or nil when absent; `malformed` when the payload is not a JSON object
    /// or `signedDate` is not a number.
    static func signedDate(_ payload: [UInt8]) throws(SignedDataError) -> Date? {
        try PayloadDecoder.decode(SignedDateOnly.self, from: payload).signedDate
    }

    private struct SignedDateOnly: Decodable {
        var signedDate: Date?
        init(from decoder: any Decoder) throws {
            signedDate = try decoder.container(keyedBy: AnyKey.self).date("signedDate")
        }
    }

    /// The header's `alg` and the subject common name of each `x5c` certificate (nil where one does not
    /// parse), without verifying anything. Nil when the header does not decode.
    public static func inspectHeader(_ jws: String) -> (alg: String?, subjects: [String?])? {
        guard let parts = try? CompactJWS(jws), let bytes = try? parts.headerJSON(),
            let header = try? decodeHeader(bytes)
        else { return nil }
        let subjects = (header.x5c ?? []).map { text -> String? in
            guard let der = Data(base64Encoded: text), let certificate = try? Certificate(derEncoded: [UInt8](der))
            else {
                return nil
            }
            return VerifiedChain.commonName(certificate)
        }
        return (header.alg, subjects)
    }

    /// Decodes the payload without verifying anything: for display next to a refusal, never for decisions.
    public static func decodeUnverified<T: SignedPayload>(_ jws: String, as type: T.Type) -> T? {
        guard let parts = try? CompactJWS(jws) else { return nil }
        return try? PayloadDecoder.decode(type, from: parts.payloadJSON)
    }

    /// The payload's raw JSON bytes without verifying anything (nil when the JWS does not split).
    public static func unverifiedPayload(_ jws: String) -> [UInt8]? {
        (try? CompactJWS(jws))?.payloadJSON
    }
}

/// A JWS whose chain and signature verified: the payload bytes may be trusted.
public struct VerifiedJWS: Sendable, Equatable {
    public let algorithm: String
    /// Subject common names of the verified chain, leaf first, ending with the trusted root.
    public let certificateNames: [String]
    /// The payload's JSON bytes.
    public let payload: [UInt8]
    public let signedDate: Date?
}
