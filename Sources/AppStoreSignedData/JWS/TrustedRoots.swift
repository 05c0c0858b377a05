import Foundation
import SwiftASN1
import X509

/// The root certificates a chain may end at. Default: Apple Root CA - G3, compiled in.
///
/// Tests and the simulator add (or substitute) their own roots, read from PEM (one or several
/// certificates) or DER files; see docs/signed-data.md.
public struct TrustedRoots: Sendable {
    /// The roots, in the order given.
    public let certificates: [Certificate]

    public init(_ certificates: [Certificate]) {
        self.certificates = certificates
    }

    /// Apple Root CA - G3 alone.
    public static let apple: TrustedRoots = {
        // The compiled-in bytes are a fixed, tested certificate (AppleRootCAG3.sha256Hex): parsing cannot fail.
        guard let root = try? Certificate(derEncoded: AppleRootCAG3.der) else {
            preconditionFailure("the compiled-in Apple Root CA - G3 does not parse")
        }
        return TrustedRoots([root])
    }()

    /// These roots plus `other`'s (duplicates dropped).
    public func adding(_ other: [Certificate]) -> TrustedRoots {
        var all = certificates
        for certificate in other where !all.contains(certificate) { all.append(certificate) }
        return TrustedRoots(all)
    }

    /// These roots plus those in one file's bytes (PEM or DER).
    public func adding(pemOrDER bytes: [UInt8]) throws(RootCertificateError) -> TrustedRoots {
        adding(try Self.parseCertificates(bytes))
    }

    /// Parses one file's bytes: PEM (every `CERTIFICATE` block) or a single DER certificate.
    /// - Throws: `RootCertificateError` naming what is wrong (never the bytes).
    public static func parseCertificates(_ bytes: [UInt8]) throws(RootCertificateError) -> [Certificate] {
        let text = String(decoding: bytes, as: UTF8.self)
        if text.contains("-----BEGIN") {
            var found: [Certificate] = []
            var rest = Substring(text)
            while let begin = rest.range(of: "-----BEGIN CERTIFICATE-----") {
                guard let end = rest.range(of: "-----END CERTIFICATE-----", range: begin.upperBound..<rest.endIndex)
                else {
                    throw RootCertificateError("a PEM CERTIFICATE block has no END line")
                }
                let block = String(rest[begin.lowerBound..<end.upperBound])
                do {
                    found.append(try Certificate(pemEncoded: block))
                } catch {
                    throw RootCertificateError("PEM certificate \(found.count + 1) does not parse")
                }
                rest = rest[end.upperBound...]
            }
            guard !found.isEmpty else { throw RootCertificateError("no PEM CERTIFICATE block") }
            return found
        }
        do {
            return [try Certificate(derEncoded: bytes)]
        } catch {
            throw RootCertificateError("neither PEM nor a DER certificate")
        }
    }
}

/// A root certificate file that could not be read as certificates.
public struct RootCertificateError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
