/// The `data` of a version 2 notification: the app, the environment and the nested signed transaction and
/// renewal info (each a JWS of its own, verified separately).
public struct NotificationData: Decodable, Sendable, Equatable {
    public var environment: String?
    public var appAppleId: Int64?
    public var bundleId: String?
    public var bundleVersion: String?
    public var signedTransactionInfo: String?
    public var signedRenewalInfo: String?
    /// 1 active, 2 expired, 3 billing retry, 4 grace period, 5 revoked.
    public var status: Int?
    public var consumptionRequestReason: String?

    public init() {}

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: AnyKey.self)
        environment = try c.string("environment")
        appAppleId = try c.int64("appAppleId")
        bundleId = try c.string("bundleId")
        bundleVersion = try c.string("bundleVersion")
        signedTransactionInfo = try c.string("signedTransactionInfo")
        signedRenewalInfo = try c.string("signedRenewalInfo")
        status = try c.int("status")
        consumptionRequestReason = try c.string("consumptionRequestReason")
    }
}
