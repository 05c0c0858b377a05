import Testing

@testable import Reconciler

/// How a run ends (docs/operations.md, "Exit codes"): each stop reason and each way of running out of items gives
/// its status, exit code and a message that says what to do next.
@Suite struct RunEndingTests {
    static func counts(done: Int, pending: Int, unresolved: Int = 0) -> RunRecords.ItemCounts {
        var counts = RunRecords.ItemCounts()
        counts.done = done
        counts.pending = pending
        counts.outcomes = [.unchanged: done - unresolved, .unresolved: unresolved].filter { $0.value > 0 }
        return counts
    }

    static func decide(
        _ stop: ReconciliationPipeline.StopReason?,
        _ counts: RunRecords.ItemCounts = counts(done: 10, pending: 0),
        notificationFailure: String? = nil
    ) -> RunEnding {
        RunEnding.decide(
            runId: 7,
            stopReason: stop,
            counts: counts,
            maxUnresolvedFraction: 0.1,
            notificationFailure: notificationFailure
        )
    }

    @Test func eachStopReasonHasItsStatusAndExitCode() {
        let cases: [(ReconciliationPipeline.StopReason, RunStatus, ReconcilerExitCode)] = [
            (.configuration("21004"), .failed, .configuration),
            (.database("connection lost"), .failed, .failure),
            (.tlsRefused("certificate refused"), .failed, .configuration),
            (.appleUnreachable("Apple unreachable"), .partial, .appleUnavailable),
            (.interrupted("SIGTERM"), .interrupted, .failure),
        ]
        for (stop, status, code) in cases {
            let ending = Self.decide(stop, Self.counts(done: 4, pending: 6))
            #expect(ending.status == status, "\(stop)")
            #expect(ending.exitCode == code, "\(stop)")
            #expect(ending.message?.contains("--resume 7") == (stop.isResumeAdvised), "\(stop): \(ending)")
        }
    }

    @Test func aRunThatRanOutOfItemsCompletesWithinTheUnresolvedBound() {
        #expect(Self.decide(nil) == RunEnding(status: .completed, exitCode: .success, message: nil))
        // 1 of 10 unresolved is the bound itself: still complete.
        #expect(Self.decide(nil, Self.counts(done: 10, pending: 0, unresolved: 1)).status == .completed)
        let above = Self.decide(nil, Self.counts(done: 10, pending: 0, unresolved: 2))
        #expect(above.status == .partial)
        #expect(above.exitCode == .unresolvedAboveThreshold)
        #expect(above.message?.contains("2 of 10 items unresolved") == true)
    }

    @Test func itemsLeftPendingWithoutAStopAreAnInterruption() {
        let ending = Self.decide(nil, Self.counts(done: 8, pending: 2))
        #expect(ending.status == .interrupted)
        #expect(ending.exitCode == .failure)
        #expect(ending.message == "2 items still pending; resume with `run --resume 7`")
    }

    @Test func unreadNotificationHistoryMakesACompleteRunPartial() {
        let ending = Self.decide(nil, notificationFailure: "Get Notification History failed: HTTP 500")
        #expect(ending.status == .partial)
        #expect(ending.exitCode == .unresolvedAboveThreshold)
        #expect(ending.message?.hasPrefix("Get Notification History failed: HTTP 500; ") == true)
        // Too many unresolved items are said first.
        let both = Self.decide(
            nil,
            Self.counts(done: 10, pending: 0, unresolved: 5),
            notificationFailure: "history failed"
        )
        #expect(both.message?.contains("unresolved") == true)
    }
}

extension ReconciliationPipeline.StopReason {
    /// Every stop but a configuration error tells the operator to resume the run.
    fileprivate var isResumeAdvised: Bool {
        if case .configuration = self { return false }
        return true
    }
}
