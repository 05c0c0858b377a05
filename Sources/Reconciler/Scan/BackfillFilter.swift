import Foundation

/// The filters of `renewal-reconciler backfill`.
public struct BackfillFilter: Sendable, Codable, Equatable {
    /// `--original-transaction-id` (repeatable) plus the lines of `--ids-file`.
    public var originalTransactionIds: [String]?
    /// The file the ids came from (shown in reports; the ids themselves are what counts).
    public var idsFile: String?
    public var userIds: [String]?
    public var productIds: [String]?
    public var expiresFrom: Date?
    public var expiresTo: Date?
    public var states: [String]?
    /// `--all`: every subscription, revoked ones included.
    public var all: Bool

    public init(
        originalTransactionIds: [String]? = nil,
        idsFile: String? = nil,
        userIds: [String]? = nil,
        productIds: [String]? = nil,
        expiresFrom: Date? = nil,
        expiresTo: Date? = nil,
        states: [String]? = nil,
        all: Bool = false
    ) {
        self.originalTransactionIds = originalTransactionIds
        self.idsFile = idsFile
        self.userIds = userIds
        self.productIds = productIds
        self.expiresFrom = expiresFrom
        self.expiresTo = expiresTo
        self.states = states
        self.all = all
    }

    /// True when no filter at all was given (and `--all` was not said): refused, to avoid an accidental
    /// full backfill.
    public var isEmpty: Bool {
        !all && originalTransactionIds == nil && userIds == nil && productIds == nil && expiresFrom == nil
            && expiresTo == nil && states == nil
    }
}
