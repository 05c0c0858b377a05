import CivilTime
import Crypto
import Foundation
import X509

/// A chain that built and verified to a trusted root (signatures, RFC 5280 rules, Apple's OIDs): what the
/// cache keeps. Validity windows are kept per certificate because each payload is checked at its own
/// `signedDate`; everything else about a chain does not depend on the time.
struct VerifiedChain: Sendable {
    struct Window: Sendable {
        let role: String
        let notBefore: Date
        let notAfter: Date
    }

    let leafKey: P256.Signing.PublicKey
    /// Leaf, intermediate, root.
    let windows: [Window]
    /// The subject common names, leaf first (the trusted root's, not x5c[2]'s).
    let subjectNames: [String]

    /// Nil when every certificate is valid at `time`, else the refusal naming the first one that is not.
    func refusal(at time: Date, timeName: String) -> SignedDataError? {
        Self.refusal(windows, at: time, timeName: timeName)
    }

    static func refusal(_ windows: [Window], at time: Date, timeName: String) -> SignedDataError? {
        for window in windows {
            if time > window.notAfter {
                return SignedDataError(
                    .certificateExpiredAtSignedDate,
                    "the \(window.role) certificate expired at \(RFC3339.string(window.notAfter)), "
                        + "before \(timeName) \(RFC3339.string(time))"
                )
            }
            if time < window.notBefore {
                return SignedDataError(
                    .certificateNotYetValidAtSignedDate,
                    "the \(window.role) certificate is valid only from \(RFC3339.string(window.notBefore)), "
                        + "after \(timeName) \(RFC3339.string(time))"
                )
            }
        }
        return nil
    }

    static func window(_ role: String, _ certificate: Certificate) -> Window {
        Window(role: role, notBefore: certificate.notValidBefore, notAfter: certificate.notValidAfter)
    }

    /// The subject's common name (CN), or the whole subject when it has none.
    static func commonName(_ certificate: Certificate) -> String {
        for rdn in certificate.subject {
            for attribute in rdn where attribute.type == .RDNAttributeType.commonName {
                return attribute.value.description
            }
        }
        return certificate.subject.description
    }
}
