/// The body of Get Transaction History (`GET /inApps/v2/history/{transactionId}`): a page of signed
/// transactions and the revision token for the next page.
public struct HistoryResponse: Decodable, Sendable, Equatable {
    public var revision: String?
    public var hasMore: Bool?
    public var bundleId: String?
    public var appAppleId: Int64?
    public var environment: String?
    public var signedTransactions: [String]

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: AnyKey.self)
        revision = try c.string("revision")
        hasMore = try c.bool("hasMore")
        bundleId = try c.string("bundleId")
        appAppleId = try c.int64("appAppleId")
        environment = try c.string("environment")
        signedTransactions = try c.value([String].self, "signedTransactions") ?? []
    }

    public static func decode(_ body: [UInt8]) throws(SignedDataError) -> HistoryResponse {
        try PayloadDecoder.decode(HistoryResponse.self, from: body)
    }
}
