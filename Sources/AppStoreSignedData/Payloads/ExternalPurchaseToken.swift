import Foundation

/// The `externalPurchaseToken` of an EXTERNAL_PURCHASE_TOKEN notification.
public struct ExternalPurchaseToken: Decodable, Sendable, Equatable {
    public var externalPurchaseId: String?
    public var tokenCreationDate: Date?
    public var appAppleId: Int64?
    public var bundleId: String?

    public init() {}

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: AnyKey.self)
        externalPurchaseId = try c.string("externalPurchaseId")
        tokenCreationDate = try c.date("tokenCreationDate")
        appAppleId = try c.int64("appAppleId")
        bundleId = try c.string("bundleId")
    }
}
