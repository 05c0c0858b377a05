/// What a simulator receipt says about itself once decoded and authenticated.
public struct ReceiptToken: Sendable, Hashable {
    public var familyIndex: UInt32
    public var originalTransactionId: UInt64
    public var sandbox: Bool
    /// Receipt creation time: the receipt covers transactions purchased up to then.
    public var createdAt: Int64
    /// Incremented each time Apple issues a newer receipt from this one.
    public var issueSequence: UInt32
}
