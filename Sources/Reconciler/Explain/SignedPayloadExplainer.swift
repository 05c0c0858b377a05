import AppStoreSignedData
import Foundation

/// `explain --jws`: verifies one App Store JWS offline and prints what it says.
///
/// Output members, in order: `verified`, `reason` (null or the refusal's name), `detail`, `payload_type`
/// (`transaction`, `renewal_info`, `notification`, `unknown`), `header` (`alg` and the subject CN of each
/// x5c certificate), `payload` (decoded fields, dates RFC 3339 UTC; a notification's nested signed
/// transaction and renewal info are verified and shown the same way). A refused JWS still shows its
/// header and payload, decoded without trust, for debugging.
public enum SignedPayloadExplainer {
    public struct Outcome: Sendable {
        public let json: ExplainJSON
        public let verified: Bool
    }

    public static func explain(text: String, verifier: SignedDataVerifier) -> Outcome {
        let jws = extractJWS(text)
        let payloadBytes = SignedDataVerifier.unverifiedPayload(jws)
        let keys = payloadBytes.flatMap(GenericJSON.parse)?.keys ?? []
        let kind: String
        if keys.contains("notificationType") {
            kind = "notification"
        } else if keys.contains("transactionId") {
            kind = "transaction"
        } else if keys.contains("autoRenewStatus") || keys.contains("autoRenewProductId") {
            kind = "renewal_info"
        } else {
            kind = "unknown"
        }

        var refusal: SignedDataError?
        var payload: ExplainJSON = .null
        do {
            switch kind {
            case "transaction":
                payload = .reflecting(try verifier.verifyTransaction(jws))
            case "renewal_info":
                payload = .reflecting(try verifier.verifyRenewalInfo(jws))
            case "notification":
                let notification = try verifier.verifyNotification(jws)
                payload = nested(.reflecting(notification), notification.data, verifier: verifier)
            default:
                let verified = try verifier.verify(jws)
                payload = GenericJSON.parse(verified.payload)?.value ?? .null
                try checkBundle(payload, verifier: verifier)
            }
        } catch {
            refusal = error
            payload = unverifiedPayload(jws, kind: kind, bytes: payloadBytes, verifier: verifier)
        }

        let header: ExplainJSON
        if let inspected = SignedDataVerifier.inspectHeader(jws) {
            header = .object([
                ("alg", .string(inspected.alg)), ("x5c", .array(inspected.subjects.map { ExplainJSON.string($0) })),
            ])
        } else {
            header = .null
        }
        let json = ExplainJSON.object([
            ("verified", .bool(refusal == nil)),
            ("reason", .string(refusal?.code.rawValue)),
            ("detail", .string(refusal?.detail)),
            ("payload_type", .string(kind)),
            ("header", header),
            ("payload", payload),
        ])
        return Outcome(json: json, verified: refusal == nil)
    }

    /// A payload of a type this tool does not decode is still held to the configured bundle id when it names one
    /// (`bundleId`), as Apple's verifier holds every payload: a signature alone does not make it this app's.
    private static func checkBundle(_ payload: ExplainJSON, verifier: SignedDataVerifier) throws(SignedDataError) {
        guard let expected = verifier.options.bundleId, case .object(let members) = payload else { return }
        guard let named = members.first(where: { $0.0 == "bundleId" })?.1 else { return }
        guard case .string(let bundleId) = named, bundleId == expected else {
            throw SignedDataError(
                .bundleMismatch,
                "the payload is for bundle \(named.text(pretty: false)), expected \(expected)"
            )
        }
    }

    /// The JWS itself, or the `signedPayload` of a notification request body (`{"signedPayload": "..."}`).
    static func extractJWS(_ text: String) -> String {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.hasPrefix("{"), let body = GenericJSON.parse(Array(trimmed.utf8)),
            case .object(let members) = body.value,
            let signed = members.first(where: { $0.0 == "signedPayload" }), case .string(let jws) = signed.1
        else { return trimmed }
        return jws
    }

    private static func unverifiedPayload(
        _ jws: String,
        kind: String,
        bytes: [UInt8]?,
        verifier: SignedDataVerifier
    ) -> ExplainJSON {
        switch kind {
        case "transaction":
            return SignedDataVerifier.decodeUnverified(jws, as: JWSTransactionDecodedPayload.self).map {
                .reflecting($0)
            }
                ?? .null
        case "renewal_info":
            return SignedDataVerifier.decodeUnverified(jws, as: JWSRenewalInfoDecodedPayload.self).map {
                .reflecting($0)
            }
                ?? .null
        case "notification":
            guard let notification = SignedDataVerifier.decodeUnverified(jws, as: ResponseBodyV2DecodedPayload.self)
            else {
                return .null
            }
            return nested(.reflecting(notification), notification.data, verifier: verifier)
        default:
            return bytes.flatMap(GenericJSON.parse)?.value ?? .null
        }
    }

    /// Replaces a notification's nested JWS strings by their own verification and decoded payload.
    private static func nested(
        _ rendered: ExplainJSON,
        _ data: NotificationData?,
        verifier: SignedDataVerifier
    )
        -> ExplainJSON
    {
        guard let data, case .object(let members) = rendered,
            let dataJSON = members.first(where: { $0.0 == "data" })?.1
        else { return rendered }
        var updated = dataJSON
        if let signed = data.signedTransactionInfo {
            updated = updated.setting("signedTransactionInfo", explain(text: signed, verifier: verifier).json)
        }
        if let signed = data.signedRenewalInfo {
            updated = updated.setting("signedRenewalInfo", explain(text: signed, verifier: verifier).json)
        }
        return rendered.setting("data", updated)
    }
}
