import AppStoreSignedData
import Crypto
import Foundation

/// Checks a freshly signed API token with the key's public half, and shows its header and claims.
public enum APITokenCheck {
    public static func verifies(_ token: APIToken, with signer: APITokenSigner) -> Bool {
        let parts = token.value.split(separator: ".")
        guard parts.count == 3, let raw = Base64URL.decode(parts[2]),
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: raw)
        else { return false }
        return signer.publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8))
    }

    /// A token part (base64url JSON) as output, or null.
    public static func json(_ part: Substring?) -> ExplainJSON {
        guard let part, let bytes = Base64URL.decode(part) else { return .null }
        return GenericJSON.parse(bytes)?.value ?? .null
    }
}
