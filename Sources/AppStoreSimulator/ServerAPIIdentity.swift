import Crypto
import Foundation
import SwiftASN1
import X509

/// The population's App Store Server API identity (docs/simulator.md, "The Server API"): an Apple-shaped
/// certificate chain that signs every JWS (a root, an intermediate carrying 1.2.840.113635.100.6.2.1, a leaf
/// carrying 1.2.840.113635.100.6.11.1, all EC P-256), and the app's In-App Purchase key with its key id and
/// issuer id, which clients sign their JWTs with.
///
/// Everything follows from (`seed`, `anchor`, `bundleId`): the keys come from a seeded hash, the subjects,
/// serial numbers and validity from the seed and the anchor. Only the certificates' ECDSA signatures differ
/// from one build to the next (swift-crypto signs with a random nonce).
public struct ServerAPIIdentity: Sendable {
    public static let intermediateOID: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 2, 1]
    public static let leafOID: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 11, 1]
    /// The `aud` claim Apple requires in API tokens.
    public static let audience = "appstoreconnect-v1"

    public let seed: UInt64
    public let bundleId: String
    /// The In-App Purchase key's id (`kid` of the client's JWT).
    public let keyId: String
    /// The team's issuer id (`iss` of the client's JWT), a UUID.
    public let issuerId: String
    /// The app's Apple id, the same number verifyReceipt answers as `app_item_id` in production.
    public let appAppleId: Int64
    /// The In-App Purchase private key (exported as `key.p8`; the simulator verifies JWTs with its public half).
    public let apiKey: P256.Signing.PrivateKey
    /// The team's App Store Connect API key (sales and finance reports; docs/simulator.md, "App Store Connect
    /// reports") and its key id; the same issuer id.
    public let teamKey: P256.Signing.PrivateKey
    public let teamKeyId: String
    /// The vendor number App Store Connect's reports are filed under (`filter[vendorNumber]`).
    public let vendorNumber: String
    public let root: Certificate
    public let intermediate: Certificate
    public let leaf: Certificate
    /// Signs the payloads: the leaf's key.
    let signer: JWSSigner
    /// Signers of the signature faults (`SignatureFault`).
    let foreignSigner: JWSSigner
    let leafWithoutOIDSigner: JWSSigner
    let expiredLeafSigner: JWSSigner

    /// Validity of the chain: from 20 years before the anchor's day to 10 years after it, so every date of
    /// the population (its histories reach a few years back) lies inside.
    public let notValidBefore: Date
    public let notValidAfter: Date

    public init(seed: UInt64, anchor: Int64, bundleId: String) {
        self.seed = seed
        self.bundleId = bundleId
        self.keyId = Self.keyId(seed: seed)
        self.issuerId = Self.issuerId(seed: seed)
        self.appAppleId = Self.appAppleId(seed: seed)
        self.apiKey = Self.derivedKey(seed: seed, label: "in-app-purchase-key")
        self.teamKey = Self.derivedKey(seed: seed, label: "app-store-connect-team-key")
        self.teamKeyId = Self.keyId(seed: seed, salt: 0x7EA3)
        self.vendorNumber = String(80_000_000 + SeededRandom.hash(seed, 0x7E4D) % 10_000_000)
        let rootKey = Self.derivedKey(seed: seed, label: "root")
        let intermediateKey = Self.derivedKey(seed: seed, label: "intermediate")
        let leafKey = Self.derivedKey(seed: seed, label: "leaf")
        let day = anchor / SimTime.day * SimTime.day
        notValidBefore = Date(timeIntervalSince1970: Double(day - 20 * 365 * SimTime.day) / 1000)
        notValidAfter = Date(timeIntervalSince1970: Double(day + 10 * 365 * SimTime.day) / 1000)
        let validity = (from: notValidBefore, to: notValidAfter)
        (root, intermediate, leaf) = Self.chain(
            seed: seed,
            keys: (root: rootKey, intermediate: intermediateKey, leaf: leafKey),
            validity: validity
        )
        signer = JWSSigner(key: leafKey, chain: [leaf, intermediate, root].map(Self.der))
        (foreignSigner, leafWithoutOIDSigner, expiredLeafSigner) = Self.faultSigners(
            seed: seed,
            chain: (root, intermediate, leaf),
            keys: (intermediate: intermediateKey, leaf: leafKey),
            validity: validity
        )
    }

    /// The chain that signs every JWS: a self-signed root, an intermediate carrying `intermediateOID` and a leaf
    /// carrying `leafOID`, each with its own key and signed by the one above it.
    private static func chain(
        seed: UInt64,
        keys: (root: P256.Signing.PrivateKey, intermediate: P256.Signing.PrivateKey, leaf: P256.Signing.PrivateKey),
        validity: (from: Date, to: Date)
    ) -> (root: Certificate, intermediate: Certificate, leaf: Certificate) {
        // Building certificates from well-formed names, keys and extensions cannot fail.
        do {
            let names = try Self.names(seed: seed)
            let root = try Self.certificate(
                key: keys.root,
                issuerKey: keys.root,
                issuer: names.root,
                subject: names.root,
                serial: 1,
                seed: seed,
                from: validity.from,
                to: validity.to,
                ca: true,
                oid: nil
            )
            let intermediate = try Self.certificate(
                key: keys.intermediate,
                issuerKey: keys.root,
                issuer: names.root,
                subject: names.intermediate,
                serial: 2,
                seed: seed,
                from: validity.from,
                to: validity.to,
                ca: true,
                oid: Self.intermediateOID
            )
            let leaf = try Self.certificate(
                key: keys.leaf,
                issuerKey: keys.intermediate,
                issuer: names.intermediate,
                subject: names.leaf,
                serial: 3,
                seed: seed,
                from: validity.from,
                to: validity.to,
                ca: false,
                oid: Self.leafOID
            )
            return (root, intermediate, leaf)
        } catch {
            fatalError("building the simulator's certificate chain failed: \(error)")
        }
    }

    /// The subjects of the chain's root, intermediate and leaf, each naming the seed.
    private static func names(
        seed: UInt64
    ) throws -> (root: DistinguishedName, intermediate: DistinguishedName, leaf: DistinguishedName) {
        let root = try DistinguishedName {
            CommonName("Simulator Root CA - G3 (seed \(seed))")
            OrganizationalUnitName("App Store Simulator Certification Authority")
            OrganizationName("renewal-reconciler simulator")
            CountryName("US")
        }
        let intermediate = try DistinguishedName {
            CommonName("Simulator Worldwide Developer Relations CA - G6 (seed \(seed))")
            OrganizationalUnitName("G6")
            OrganizationName("renewal-reconciler simulator")
            CountryName("US")
        }
        let leaf = try DistinguishedName {
            CommonName("Simulator Mac App Store and iTunes Store Receipt Signing (seed \(seed))")
            OrganizationalUnitName("App Store Simulator")
            OrganizationName("renewal-reconciler simulator")
            CountryName("US")
        }
        return (root, intermediate, leaf)
    }

    /// The signers of the signature faults (`SignatureFault`), all with the leaf's key: under a foreign chain of the
    /// same subjects, under a leaf without its OID, and under a leaf that expired ten years before the anchor.
    private static func faultSigners(
        seed: UInt64,
        chain: (root: Certificate, intermediate: Certificate, leaf: Certificate),
        keys: (intermediate: P256.Signing.PrivateKey, leaf: P256.Signing.PrivateKey),
        validity: (from: Date, to: Date)
    ) -> (foreign: JWSSigner, leafWithoutOID: JWSSigner, expiredLeaf: JWSSigner) {
        do {
            let foreign = try foreignChainSigner(seed: seed, chain: chain, leafKey: keys.leaf, validity: validity)
            let names = (intermediate: chain.intermediate.subject, leaf: chain.leaf.subject)
            let noOIDLeaf = try Self.certificate(
                key: keys.leaf,
                issuerKey: keys.intermediate,
                issuer: names.intermediate,
                subject: names.leaf,
                serial: 14,
                seed: seed,
                from: validity.from,
                to: validity.to,
                ca: false,
                oid: nil
            )
            let expiredUntil = validity.from.addingTimeInterval(Double(10 * 365 * SimTime.day) / 1000)
            let expiredLeaf = try Self.certificate(
                key: keys.leaf,
                issuerKey: keys.intermediate,
                issuer: names.intermediate,
                subject: names.leaf,
                serial: 15,
                seed: seed,
                from: validity.from,
                to: expiredUntil,
                ca: false,
                oid: Self.leafOID
            )
            let rest = [chain.intermediate, chain.root]
            return (
                foreign,
                JWSSigner(key: keys.leaf, chain: ([noOIDLeaf] + rest).map(Self.der)),
                JWSSigner(key: keys.leaf, chain: ([expiredLeaf] + rest).map(Self.der))
            )
        } catch {
            fatalError("building the simulator's fault certificates failed: \(error)")
        }
    }

    /// The leaf's key under a chain of the same subjects whose root and intermediate have other keys: only the
    /// root's key tells them apart.
    private static func foreignChainSigner(
        seed: UInt64,
        chain: (root: Certificate, intermediate: Certificate, leaf: Certificate),
        leafKey: P256.Signing.PrivateKey,
        validity: (from: Date, to: Date)
    ) throws -> JWSSigner {
        let names = (root: chain.root.subject, intermediate: chain.intermediate.subject, leaf: chain.leaf.subject)
        let foreignRootKey = Self.derivedKey(seed: seed, label: "foreign-root")
        let foreignIntermediateKey = Self.derivedKey(seed: seed, label: "foreign-intermediate")
        let foreignRoot = try Self.certificate(
            key: foreignRootKey,
            issuerKey: foreignRootKey,
            issuer: names.root,
            subject: names.root,
            serial: 11,
            seed: seed,
            from: validity.from,
            to: validity.to,
            ca: true,
            oid: nil
        )
        let foreignIntermediate = try Self.certificate(
            key: foreignIntermediateKey,
            issuerKey: foreignRootKey,
            issuer: names.root,
            subject: names.intermediate,
            serial: 12,
            seed: seed,
            from: validity.from,
            to: validity.to,
            ca: true,
            oid: Self.intermediateOID
        )
        let foreignLeaf = try Self.certificate(
            key: leafKey,
            issuerKey: foreignIntermediateKey,
            issuer: names.intermediate,
            subject: names.leaf,
            serial: 13,
            seed: seed,
            from: validity.from,
            to: validity.to,
            ca: false,
            oid: Self.leafOID
        )
        return JWSSigner(key: leafKey, chain: [foreignLeaf, foreignIntermediate, foreignRoot].map(Self.der))
    }

    /// One certificate of a chain: a CA (key cert sign) or a leaf (digital signature), with `oid` if given.
    private static func certificate(
        key: P256.Signing.PrivateKey,
        issuerKey: P256.Signing.PrivateKey,
        issuer: DistinguishedName,
        subject: DistinguishedName,
        serial: UInt64,
        seed: UInt64,
        from: Date,
        to: Date,
        ca: Bool,
        oid: ASN1ObjectIdentifier?
    ) throws -> Certificate {
        var extensions = try Certificate.Extensions {
            if ca {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: issuer == subject ? nil : 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            } else {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
            }
        }
        if let oid { try extensions.append(Certificate.Extension(oid: oid, critical: false, value: [0x05, 0x00])) }
        return try Certificate(
            version: .v3,
            serialNumber: Self.serial(seed: seed, label: serial),
            publicKey: .init(key.publicKey),
            notValidBefore: from,
            notValidAfter: to,
            issuer: issuer,
            subject: subject,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: extensions,
            issuerPrivateKey: .init(issuerKey)
        )
    }

    // MARK: Derivations from the seed

    /// A P-256 private key from SHA-256(label, seed, counter): the first digest that is a valid scalar.
    static func derivedKey(seed: UInt64, label: String) -> P256.Signing.PrivateKey {
        var counter: UInt32 = 0
        while true {
            var hasher = SHA256()
            hasher.update(data: Array("appstore-simulator/\(label)/".utf8))
            withUnsafeBytes(of: seed.bigEndian) { hasher.update(bufferPointer: $0) }
            withUnsafeBytes(of: counter.bigEndian) { hasher.update(bufferPointer: $0) }
            if let key = try? P256.Signing.PrivateKey(rawRepresentation: Array(hasher.finalize())) { return key }
            counter += 1
        }
    }

    /// A positive, non-zero serial number of 16 bytes.
    static func serial(seed: UInt64, label: UInt64) -> Certificate.SerialNumber {
        var rng = SeededRandom(seed, 0x5E41, label)
        var bytes: [UInt8] = []
        for _ in 0..<2 { withUnsafeBytes(of: rng.next().bigEndian) { bytes += $0 } }
        bytes[0] = (bytes[0] & 0x7F) | 0x10
        return Certificate.SerialNumber(bytes: bytes)
    }

    /// Ten characters of A-Z and 0-9, like the key ids App Store Connect shows.
    static func keyId(seed: UInt64, salt: UInt64 = 0x4B1D) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        var rng = SeededRandom(seed, salt)
        return String((0..<10).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] })
    }

    /// A lower-case UUID (version 4 layout) from the seed.
    static func issuerId(seed: UInt64) -> String {
        var rng = SeededRandom(seed, 0x1550E)
        var bytes: [UInt8] = []
        for _ in 0..<2 { withUnsafeBytes(of: rng.next().bigEndian) { bytes += $0 } }
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let hex = bytes.map { String(format: "%02x", $0) }.joined()
        let chars = Array(hex)
        let parts = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(chars[$0]) }
        return parts.joined(separator: "-")
    }

    /// The production app id; `ResponseRenderer` writes the same digits as `adam_id` and `app_item_id`.
    public static func appAppleId(seed: UInt64) -> Int64 {
        Int64("1" + String(seed % 100_000_000 + 400_000_000)) ?? 0
    }

    // MARK: Exported forms

    static func der(_ certificate: Certificate) -> [UInt8] {
        var serializer = DER.Serializer()
        // Serializing a certificate built above cannot fail.
        try! serializer.serialize(certificate)
        return serializer.serializedBytes
    }

    /// The root certificate as PEM (`server-api/root.pem`): the only anchor a client needs.
    public var rootPEM: String {
        // A certificate built above always serializes.
        try! root.serializeAsPEM().pemString + "\n"
    }

    /// The In-App Purchase key as Apple issues it (`key.p8`): PKCS#8 PEM.
    public var apiKeyPEM: String { apiKey.pemRepresentation + "\n" }

    /// `server-api/api.json`: `{"key_id", "issuer_id", "bundle_id", "app_apple_id", "team_key_id", "vendor_number"}`.
    public func apiJSON() -> [UInt8] {
        var w = JSONWriter(capacity: 200)
        w.beginObject()
        w.field("key_id", keyId)
        w.field("issuer_id", issuerId)
        w.field("bundle_id", bundleId)
        w.key("app_apple_id")
        w.int(appAppleId)
        w.field("team_key_id", teamKeyId)
        w.field("vendor_number", vendorNumber)
        w.endObject()
        w.bytes.append(10)
        return w.bytes
    }

    /// Writes `root.pem`, `key.p8` and `team-key.p8` (mode 0600) and `api.json` into `directory` (created if missing).
    public func export(to directory: String) throws {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw PopulationExporter.ExportError(path: directory, reason: "cannot create directory (\(error))")
        }
        let files: [(String, [UInt8], Int)] = [
            ("root.pem", Array(rootPEM.utf8), 0o644), ("key.p8", Array(apiKeyPEM.utf8), 0o600),
            ("team-key.p8", Array((teamKey.pemRepresentation + "\n").utf8), 0o600), ("api.json", apiJSON(), 0o644),
        ]
        for (name, bytes, mode) in files {
            let path = directory + "/" + name
            guard
                FileManager.default.createFile(
                    atPath: path,
                    contents: Data(bytes),
                    attributes: [.posixPermissions: mode]
                )
            else { throw PopulationExporter.ExportError(path: path, reason: "cannot write file") }
        }
    }

    /// A client's API token (JWT, ES256) signed with the population's In-App Purchase key, for tools such as
    /// curl and wrk (`appstore-simulator token`); a real client signs its own with `key.p8`.
    public func apiToken(issuedAt: Int64, lifetimeSeconds: Int64) -> String {
        token(issuedAt: issuedAt, lifetimeSeconds: lifetimeSeconds, scope: .serverAPI)
    }

    /// A token for `scope`: the In-App Purchase key's with `bid`, or the team key's without it.
    public func token(issuedAt: Int64, lifetimeSeconds: Int64, scope: APITokenAuthenticator.Scope) -> String {
        let team = scope == .appStoreConnect
        let header = #"{"alg":"ES256","kid":"\#(team ? teamKeyId : keyId)","typ":"JWT"}"#
        var claims = JSONWriter(capacity: 200)
        claims.beginObject()
        claims.field("iss", issuerId)
        claims.key("iat")
        claims.int(issuedAt)
        claims.key("exp")
        claims.int(issuedAt + lifetimeSeconds)
        claims.field("aud", Self.audience)
        if !team { claims.field("bid", bundleId) }
        claims.endObject()
        var input = Base64URL.encode(Array(header.utf8)) + [46] + Base64URL.encode(claims.bytes)
        // Signing bytes in memory with a valid P-256 key cannot fail.
        let signature = try! (team ? teamKey : apiKey).signature(for: input)
        input.append(46)
        input += Base64URL.encode(Array(signature.rawRepresentation))
        return String(decoding: input, as: UTF8.self)
    }

    /// Signs a payload (JSON bytes) as a compact JWS with the population's chain.
    public func sign(payload: [UInt8]) -> String { signer.sign(payload: payload) }

    /// Signs a payload with the defect `fault` (nil: correctly).
    public func sign(payload: [UInt8], fault: SignatureFault?) -> String {
        switch fault {
        case nil: signer.sign(payload: payload)
        case .foreignChain?: foreignSigner.sign(payload: payload)
        case .leafWithoutOID?: leafWithoutOIDSigner.sign(payload: payload)
        case .expiredLeaf?: expiredLeafSigner.sign(payload: payload)
        case .tamperedPayload?: signer.signTampered(payload: payload)
        }
    }
}
