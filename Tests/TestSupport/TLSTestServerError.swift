/// The TLS test server (`TLSTestServer`) could not start.
public struct TLSTestServerError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
