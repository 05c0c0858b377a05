import Foundation

/// Which subscriptions a run verifies. Stored with the run (`reconciliation_runs.parameters`) so that
/// `--resume` finishes the run exactly as planned.
///
/// Encoded as `{"due": {...}}` or `{"backfill": {"_0": {...}}}` (see `Selection+Codable.swift`): the shape
/// older builds stored, so a run started by one still resumes.
public enum Selection: Sendable, Equatable {
    /// The nightly default: rows never verified; rows not revoked with `expires_at` within
    /// [as_of - lookback, as_of + lookahead] and not verified in the last `minRecheck` seconds; and revoked
    /// rows the app changed since they were last verified, or last verified more than
    /// `max(recheckRevoked, minRecheck)` seconds ago (a customer can buy again after a refund).
    case due(
        lookaheadSeconds: Double, lookbackSeconds: Double, minRecheckSeconds: Double,
        recheckRevokedSeconds: Double = Selection.defaultRecheckRevokedSeconds)
    /// An explicit backfill selection; every given filter must hold (AND).
    case backfill(BackfillFilter)

    /// `--recheck-revoked` when not given, and for runs stored by builds that did not know it: 7 days.
    public static let defaultRecheckRevokedSeconds: Double = 7 * 86_400
}

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
        originalTransactionIds: [String]? = nil, idsFile: String? = nil, userIds: [String]? = nil,
        productIds: [String]? = nil, expiresFrom: Date? = nil, expiresTo: Date? = nil, states: [String]? = nil,
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

/// Everything a run was started with, stored as JSON in `reconciliation_runs.parameters`.
public struct RunParameters: Sendable, Codable, Equatable {
    public var selection: Selection
    public var options: RunOptions
    public var bundleId: String?
    /// True when `--now` fixed the clock (decisions then use `as_of`, not the wall clock).
    public var fixedClock: Bool

    public init(selection: Selection, options: RunOptions, bundleId: String?, fixedClock: Bool) {
        self.selection = selection
        self.options = options
        self.bundleId = bundleId
        self.fixedClock = fixedClock
    }

    public func jsonString() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }

    public static func decode(_ json: String) throws -> RunParameters {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(RunParameters.self, from: Data(json.utf8))
    }
}
