/// One subscription of a group in Get All Subscription Statuses: its status and its latest signed
/// transaction and renewal info.
public struct LastTransactionsItem: Decodable, Sendable, Equatable {
    /// 1 active, 2 expired, 3 billing retry, 4 grace period, 5 revoked.
    public var status: Int?
    public var originalTransactionId: String?
    public var signedTransactionInfo: String?
    public var signedRenewalInfo: String?

    public init(
        status: Int?,
        originalTransactionId: String?,
        signedTransactionInfo: String?,
        signedRenewalInfo: String?
    ) {
        self.status = status
        self.originalTransactionId = originalTransactionId
        self.signedTransactionInfo = signedTransactionInfo
        self.signedRenewalInfo = signedRenewalInfo
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: AnyKey.self)
        status = try c.int("status")
        originalTransactionId = try c.string("originalTransactionId")
        signedTransactionInfo = try c.string("signedTransactionInfo")
        signedRenewalInfo = try c.string("signedRenewalInfo")
    }
}
