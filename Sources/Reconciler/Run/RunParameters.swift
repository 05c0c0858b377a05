import Foundation

/// Everything a run was started with, stored as JSON in `reconciliation_runs.parameters`.
public struct RunParameters: Sendable, Codable, Equatable {
    public var selection: Selection
    public var options: RunOptions
    public var bundleId: String?
    /// True when `--now` fixed the clock (decisions then use `as_of`, not the wall clock).
    public var fixedClock: Bool
    /// How the run asks Apple (absent in runs stored by builds before the App Store Server API: verifyReceipt).
    public var source: AppleSourceKind?
    /// The apps of a run started with `--apps` (bundle id -> source); nil for a one-app run.
    public var apps: [String: AppleSourceKind]?
    /// True for a run of several workers (`run --worker`); nil for a one-process run.
    public var workers: Bool?

    public init(
        selection: Selection,
        options: RunOptions,
        bundleId: String?,
        fixedClock: Bool,
        source: AppleSourceKind? = nil,
        apps: [String: AppleSourceKind]? = nil,
        workers: Bool? = nil
    ) {
        self.selection = selection
        self.options = options
        self.bundleId = bundleId
        self.fixedClock = fixedClock
        self.source = source
        self.apps = apps
        self.workers = workers
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
