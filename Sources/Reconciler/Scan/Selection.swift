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
    /// `max(recheckRevoked, minRecheck)` seconds ago (a customer can buy again after a refund). A row whose
    /// last verification was a rejection is left out until its `next_check_at` (the schedule
    /// `recheckRejectedSeconds`, `RejectedRecheckSchedule`), unless the app changed it since. Then the sweep:
    /// about 1/`sweepDays` of the other verified, non-revoked rows, least recently verified first, so what the
    /// window cannot see (a mid-period refund, an auto-renew change) is seen within `sweepDays` nights
    /// (0: no sweep; docs/architecture.md, "The sweep").
    case due(
        lookaheadSeconds: Double,
        lookbackSeconds: Double,
        minRecheckSeconds: Double,
        recheckRevokedSeconds: Double = Selection.defaultRecheckRevokedSeconds,
        recheckRejectedSeconds: [Double] = Selection.defaultRecheckRejectedSeconds,
        sweepDays: Double = Selection.defaultSweepDays
    )
    /// An explicit backfill selection; every given filter must hold (AND).
    case backfill(BackfillFilter)

    /// `--recheck-revoked` when not given, and for runs stored by builds that did not know it: 7 days.
    public static let defaultRecheckRevokedSeconds: Double = 7 * 86_400

    /// `--recheck-rejected` when not given, and for runs stored by builds that did not know it:
    /// 1, 2, 4, 8, 16, then every 30 days.
    public static let defaultRecheckRejectedSeconds: [Double] = [1, 2, 4, 8, 16, 30].map { $0 * 86_400 }

    /// `--sweep-days` when not given: 30. A run stored by a build that did not know the sweep resumes with 0
    /// (no sweep), as it was planned.
    public static let defaultSweepDays: Double = 30

    /// The schedule the rejection writes of a run with this selection use: the nightly run's own; a
    /// backfill uses the defaults (`--min-recheck` 20 h).
    public var rejectedRecheck: RejectedRecheckSchedule {
        switch self {
        case .due(_, _, let minRecheck, _, let steps, _):
            return RejectedRecheckSchedule(stepsSeconds: steps, minRecheckSeconds: minRecheck)
        case .backfill:
            return RejectedRecheckSchedule()
        }
    }
}

/// When a rejected subscription is asked again (docs/architecture.md): after its n-th rejection in a row it
/// rests for the n-th step (the last step repeats) beyond `--min-recheck`, so with the defaults a row
/// rejected tonight is skipped by the next 1, 2, 4, 8, 16, then 30 nightly runs. The step is counted past
/// `--min-recheck` so that a nightly run starting a little earlier than the one before does not count as a
/// day later.
public struct RejectedRecheckSchedule: Sendable, Equatable {
    public var stepsSeconds: [Double]
    public var minRecheckSeconds: Double

    public init(
        stepsSeconds: [Double] = Selection.defaultRecheckRejectedSeconds,
        minRecheckSeconds: Double = 20 * 3600
    ) {
        self.stepsSeconds = stepsSeconds.isEmpty ? Selection.defaultRecheckRejectedSeconds : stepsSeconds
        self.minRecheckSeconds = max(0, minRecheckSeconds)
    }

    /// Seconds from a row's n-th rejection in a row (n from 1) to its `next_check_at`, for n = 1...count of
    /// steps; beyond that the last one.
    public var offsetsSeconds: [Double] { stepsSeconds.map { $0 + minRecheckSeconds } }

    /// The `next_check_at` of a row rejected at `verifiedAt` for the `count`-th time in a row.
    public func nextCheck(after verifiedAt: Date, rejections count: Int) -> Date {
        let offsets = offsetsSeconds
        return verifiedAt.addingTimeInterval(offsets[min(max(count, 1), offsets.count) - 1])
    }
}
