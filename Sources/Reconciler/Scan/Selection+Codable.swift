import Foundation

/// The JSON of a selection in `reconciliation_runs.parameters`, written by hand in the shape Swift's
/// synthesized coding produced before `recheckRevokedSeconds` existed:
/// `{"due": {"lookaheadSeconds": .., "lookbackSeconds": .., "minRecheckSeconds": .., "recheckRevokedSeconds": ..}}`
/// and `{"backfill": {"_0": {...}}}`. A stored `due` without `recheckRevokedSeconds` (a run started by an
/// older build, resumed by this one) decodes with `Selection.defaultRecheckRevokedSeconds`; one without
/// `recheckRejectedSeconds` with `Selection.defaultRecheckRejectedSeconds`; one without `sweepDays` with 0 (that
/// build planned no sweep).
extension Selection: Codable {
    private enum CodingKeys: String, CodingKey {
        case due, backfill
    }

    private enum DueKeys: String, CodingKey {
        case lookaheadSeconds, lookbackSeconds, minRecheckSeconds, recheckRevokedSeconds, recheckRejectedSeconds
        case sweepDays
    }

    private enum BackfillKeys: String, CodingKey {
        case filter = "_0"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        guard container.allKeys.count == 1, let key = container.allKeys.first else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: container.codingPath,
                    debugDescription: "a selection is an object with exactly one key, \"due\" or \"backfill\""
                )
            )
        }
        switch key {
        case .due:
            let due = try container.nestedContainer(keyedBy: DueKeys.self, forKey: .due)
            self = .due(
                lookaheadSeconds: try due.decode(Double.self, forKey: .lookaheadSeconds),
                lookbackSeconds: try due.decode(Double.self, forKey: .lookbackSeconds),
                minRecheckSeconds: try due.decode(Double.self, forKey: .minRecheckSeconds),
                recheckRevokedSeconds: try due.decodeIfPresent(Double.self, forKey: .recheckRevokedSeconds)
                    ?? Selection.defaultRecheckRevokedSeconds,
                recheckRejectedSeconds: try due.decodeIfPresent([Double].self, forKey: .recheckRejectedSeconds)
                    ?? Selection.defaultRecheckRejectedSeconds,
                sweepDays: try due.decodeIfPresent(Double.self, forKey: .sweepDays) ?? 0
            )
        case .backfill:
            let backfill = try container.nestedContainer(keyedBy: BackfillKeys.self, forKey: .backfill)
            self = .backfill(try backfill.decode(BackfillFilter.self, forKey: .filter))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .due(let lookahead, let lookback, let minRecheck, let recheckRevoked, let recheckRejected, let sweepDays):
            var due = container.nestedContainer(keyedBy: DueKeys.self, forKey: .due)
            try due.encode(lookahead, forKey: .lookaheadSeconds)
            try due.encode(lookback, forKey: .lookbackSeconds)
            try due.encode(minRecheck, forKey: .minRecheckSeconds)
            try due.encode(recheckRevoked, forKey: .recheckRevokedSeconds)
            try due.encode(recheckRejected, forKey: .recheckRejectedSeconds)
            try due.encode(sweepDays, forKey: .sweepDays)
        case .backfill(let filter):
            var backfill = container.nestedContainer(keyedBy: BackfillKeys.self, forKey: .backfill)
            try backfill.encode(filter, forKey: .filter)
        }
    }
}
