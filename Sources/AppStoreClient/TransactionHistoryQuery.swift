import Foundation

/// The query of Get Transaction History v2 (`GET /inApps/v2/history/{transactionId}`): the same on every page
/// (Apple's `revision` only works with it), the page itself travelling apart.
public struct TransactionHistoryQuery: Sendable, Equatable {
    /// `ASCENDING` (oldest first) or `DESCENDING`.
    public var sort: String
    /// `AUTO_RENEWABLE`, ... (nil: every type).
    public var productType: String?
    public var subscriptionGroupIdentifier: String?
    /// Only purchases from this date (nil: all of them).
    public var startDate: Date?

    public init(
        sort: String = "ASCENDING",
        productType: String? = "AUTO_RENEWABLE",
        subscriptionGroupIdentifier: String? = nil,
        startDate: Date? = nil
    ) {
        self.sort = sort
        self.productType = productType
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        self.startDate = startDate
    }

    /// The query items, `revision` last when given.
    func items(revision: String?) -> [(String, String)] {
        var items = [("sort", sort)]
        if let productType { items.append(("productType", productType)) }
        if let subscriptionGroupIdentifier {
            items.append(("subscriptionGroupIdentifier", subscriptionGroupIdentifier))
        }
        if let startDate { items.append(("startDate", String(Int64(startDate.timeIntervalSince1970 * 1000)))) }
        if let revision { items.append(("revision", revision)) }
        return items
    }
}
