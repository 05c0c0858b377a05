/// The `summary` of a RENEWAL_EXTENSION notification (a renewal-date extension for many subscribers).
public struct NotificationSummary: Decodable, Sendable, Equatable {
    public var environment: String?
    public var appAppleId: Int64?
    public var bundleId: String?
    public var productId: String?
    public var requestIdentifier: String?
    public var storefrontCountryCodes: [String]?
    public var succeededCount: Int64?
    public var failedCount: Int64?

    public init() {}

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: AnyKey.self)
        environment = try c.string("environment")
        appAppleId = try c.int64("appAppleId")
        bundleId = try c.string("bundleId")
        productId = try c.string("productId")
        requestIdentifier = try c.string("requestIdentifier")
        storefrontCountryCodes = try c.value([String].self, "storefrontCountryCodes")
        succeededCount = try c.int64("succeededCount")
        failedCount = try c.int64("failedCount")
    }
}
