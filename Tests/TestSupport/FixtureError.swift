/// A test fixture that could not be built (a child process failed, a file could not be written): the message says what.
public struct FixtureError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
