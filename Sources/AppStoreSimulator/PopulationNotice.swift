/// A notification about a customer that is not about a transaction: RESCIND_CONSENT (an `appData` payload) or a
/// type Apple has not documented (`futureType`: its own payload key, no `data`), which a client must store and
/// not act on.
public struct PopulationNotice: Sendable {
    public enum Kind: Sendable {
        case rescindConsent
        case futureType
    }

    public var kind: Kind
    public var family: Int
    public var at: Int64

    /// The undocumented type and its payload key.
    public static let futureTypeName = "SUBSCRIPTION_TRANSFERRED"
    public static let futureTypeKey = "transferInfo"
}
