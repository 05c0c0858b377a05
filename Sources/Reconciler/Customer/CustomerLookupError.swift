/// Why `customer` has no story to tell (docs/customer.md, "Exit codes"): each names what was asked and carries its
/// exit code. Nothing secret is in a message: ids only, never a token, a key or a signed payload.
public struct CustomerLookupError: Error, ExitCodeProviding, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// No subscription in the database belongs to what was asked.
        case noSuchCustomer
        /// Apple knows no such order for this app (`OrderLookupStatus` 1, or 400 for an id of the wrong shape).
        case unknownOrder
        /// A signed transaction of Apple's answer did not verify (chain, OIDs, signature, bundle, environment) or
        /// held a value out of bounds: nothing in the answer is believed.
        case signedDataRefused
        /// Apple refused the token (401): the key, key id, issuer id or bundle id is wrong.
        case unauthorized
        /// Apple did not answer usefully (transport failure, 429, 5xx, a body that is not Apple's): ask again later.
        case appleUnavailable
    }

    public let kind: Kind
    public let description: String

    public init(_ kind: Kind, _ description: String) {
        self.kind = kind
        self.description = description
    }

    public var exitCode: ReconcilerExitCode {
        switch kind {
        case .noSuchCustomer, .unknownOrder, .signedDataRefused: return .failure
        case .unauthorized: return .configuration
        case .appleUnavailable: return .appleUnavailable
        }
    }
}
