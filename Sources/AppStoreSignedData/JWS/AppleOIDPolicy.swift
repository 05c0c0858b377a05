import SwiftASN1
import X509

/// The App Store's own chain rule on top of RFC 5280: exactly leaf, intermediate, root, with Apple's
/// marker extensions on the intermediate (WWDR, 1.2.840.113635.100.6.2.1) and the leaf (App Store
/// receipt signing, 1.2.840.113635.100.6.11.1). docs/signed-data.md lists the order of the checks.
struct AppleOIDPolicy: VerifierPolicy {
    static let intermediateOID: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 2, 1]
    static let leafOID: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 11, 1]

    let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = []

    /// Which certificate lacks its marker, or nil when both carry it.
    static func missingOID(leaf: Certificate, intermediate: Certificate) -> String? {
        if !intermediate.extensions.contains(where: { $0.oid == intermediateOID }) {
            return "the intermediate certificate lacks OID 1.2.840.113635.100.6.2.1 (Apple WWDR)"
        }
        if !leaf.extensions.contains(where: { $0.oid == leafOID }) {
            return "the leaf certificate lacks OID 1.2.840.113635.100.6.11.1 (App Store receipt signing)"
        }
        return nil
    }

    mutating func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) async -> PolicyEvaluationResult {
        guard chain.count == 3 else {
            return .failsToMeetPolicy(reason: "the chain has \(chain.count) certificates, not 3")
        }
        if let missing = Self.missingOID(leaf: chain[0], intermediate: chain[1]) {
            return .failsToMeetPolicy(reason: missing)
        }
        return .meetsPolicy
    }
}
