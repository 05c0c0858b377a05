/// The body of Get All Subscription Statuses (`GET /inApps/v1/subscriptions/{transactionId}`). Not signed
/// itself: each `signedTransactionInfo` / `signedRenewalInfo` inside is.
public struct StatusResponse: Decodable, Sendable, Equatable {
    public var environment: String?
    public var bundleId: String?
    public var appAppleId: Int64?
    public var data: [SubscriptionGroupIdentifierItem]

    public init(environment: String?, bundleId: String?, appAppleId: Int64?, data: [SubscriptionGroupIdentifierItem]) {
        self.environment = environment
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.data = data
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: AnyKey.self)
        environment = try c.string("environment")
        bundleId = try c.string("bundleId")
        appAppleId = try c.int64("appAppleId")
        guard let groups = try c.value([SubscriptionGroupIdentifierItem].self, "data") else {
            throw DecodingError.keyNotFound(
                AnyKey("data"),
                .init(codingPath: [], debugDescription: "a status response has a data array")
            )
        }
        data = groups
    }

    /// Decodes a response body; `malformed` names the field at fault.
    public static func decode(_ body: [UInt8]) throws(SignedDataError) -> StatusResponse {
        try PayloadDecoder.decode(StatusResponse.self, from: body)
    }
}
