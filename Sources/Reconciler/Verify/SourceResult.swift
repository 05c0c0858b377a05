import ReceiptDomain

/// How a source finished one item: what the writer records, the environment asked last and Apple's status.
public struct SourceResult: Sendable {
    public let kind: ItemResult.Kind
    public let environment: AppleEnvironment?
    public let appleStatus: Int?

    public init(kind: ItemResult.Kind, environment: AppleEnvironment?, appleStatus: Int?) {
        self.kind = kind
        self.environment = environment
        self.appleStatus = appleStatus
    }
}
