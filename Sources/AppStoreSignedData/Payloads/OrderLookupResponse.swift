/// The body of Look Up Order ID (`GET /inApps/v1/lookup/{orderId}`): `status` 0 (valid: the order's signed
/// transactions, at least one) or 1 (invalid: Apple knows no such order for this app, and no transactions).
public struct OrderLookupResponse: Decodable, Sendable, Equatable {
    /// Apple's `OrderLookupStatus`.
    public static let valid: Int64 = 0
    public static let invalid: Int64 = 1

    public var status: Int64?
    public var signedTransactions: [String]

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: AnyKey.self)
        status = try c.int64("status")
        signedTransactions = try c.value([String].self, "signedTransactions") ?? []
    }

    public static func decode(_ body: [UInt8]) throws(SignedDataError) -> OrderLookupResponse {
        try PayloadDecoder.decode(OrderLookupResponse.self, from: body)
    }
}
