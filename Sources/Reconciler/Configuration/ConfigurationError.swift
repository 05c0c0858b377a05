/// A configuration problem: a missing or unusable setting. Maps to exit code 78.
/// The message names the setting (environment variable, flag or file) and never the secret's value.
public struct ConfigurationError: Error, CustomStringConvertible, Sendable {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
