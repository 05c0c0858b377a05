/// A secret value (the App Store shared secret). Its `description` never shows the value, so a secret
/// that ends up in string interpolation, a log line or an error message prints as `<redacted>`.
public struct Secret: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The secret itself; read it only where it is sent (the verifyReceipt request body).
    public let value: String

    public init(_ value: String) { self.value = value }

    public var description: String { "<redacted>" }
    public var debugDescription: String { "<redacted>" }
}
