import Crypto
import Foundation

/// Signs a webhook as the Standard Webhooks convention says (standardwebhooks.com; docs/events.md, "Delivery"):
/// `webhook-signature: v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">` with the secret's key.
/// The secret is `whsec_` followed by the base64 of the key (at least 24 bytes); it is never logged or shown.
public struct WebhookSigner: Sendable {
    private let key: SymmetricKey

    /// Reads `whsec_...` (surrounding white space ignored).
    /// - Throws: `ConfigurationError` when it lacks the prefix, is not base64, or its key is shorter than 24 bytes.
    public init(secret: String) throws {
        let text = secret.trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasPrefix("whsec_") else {
            throw ConfigurationError("the webhook secret must start with whsec_ (Standard Webhooks' format)")
        }
        guard let bytes = Data(base64Encoded: String(text.dropFirst(6))) else {
            throw ConfigurationError("the webhook secret after whsec_ is not base64")
        }
        guard bytes.count >= 24 else {
            throw ConfigurationError("the webhook secret's key is \(bytes.count) bytes; at least 24 are needed")
        }
        key = SymmetricKey(data: bytes)
    }

    /// `v1,<signature>` for the message `id`, sent at `timestamp` (Unix seconds), with this body.
    public func signature(id: String, timestamp: Int64, body: Data) -> String {
        var message = Data("\(id).\(timestamp).".utf8)
        message.append(body)
        let mac = HMAC<SHA256>.authenticationCode(for: message, using: key)
        return "v1," + Data(mac).base64EncodedString()
    }
}
