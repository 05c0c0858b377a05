/// How support names a customer (docs/customer.md): the app's user id, the original transaction id of one of the
/// customer's subscriptions (any transaction id of it is accepted too), the app account token the app gave StoreKit,
/// or the order id on the customer's App Store receipt (asked of Apple with Look Up Order ID first).
public enum CustomerQuery: Sendable, Equatable {
    case userId(String)
    case originalTransactionId(String)
    case appAccountToken(String)
    case orderId(String)

    /// The flag's name without dashes, as the output names the query.
    public var kind: String {
        switch self {
        case .userId: return "user_id"
        case .originalTransactionId: return "original_transaction_id"
        case .appAccountToken: return "app_account_token"
        case .orderId: return "order_id"
        }
    }

    public var value: String {
        switch self {
        case .userId(let v), .originalTransactionId(let v), .appAccountToken(let v), .orderId(let v): return v
        }
    }
}
