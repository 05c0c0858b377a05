/// Why an App Store Server API private key could not be used. The message says what kind of key or file
/// was found, never any of its bytes.
public struct APIKeyError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
