import AppStoreClient
import Foundation
import ReceiptDomain
import Testing

@testable import Reconciler

/// What a Server API answer is to the item's `AttemptPlan`, and the plan it hands back (as it stands after
/// its step, so the verification goes on from there).
@Suite struct ServerAPIAnswerPlanTests {
    static let now = Date(timeIntervalSince1970: 1_790_000_000)

    static func attempt(_ status: Int?, errorCode: Int? = nil, retryAfter: Date? = nil) -> ServerAPIAttemptResult {
        ServerAPIAttemptResult(
            environment: .production,
            httpStatus: status,
            errorCode: errorCode,
            body: [],
            retryAfter: retryAfter,
            transportFailure: status == nil ? .timeout : nil,
            elapsed: .milliseconds(5)
        )
    }

    static func started() -> AttemptPlan {
        var plan = AttemptPlan(
            policy: AttemptPolicy(maxAttempts: 3, base: .milliseconds(100), cap: .seconds(1), jitter: .none)
        )
        _ = plan.start()
        return plan
    }

    @Test func notFoundOnStatusesSwitchesOnceAndTheSwitchSticks() throws {
        let answer = ServerAPIAnswer(attempt: Self.attempt(404, errorCode: 4_040_010), isStatuses: true)
        let planned = try #require(answer.planned(Self.started(), now: Self.now).planned)
        #expect(planned.step == .send(.sandbox, page: nil, switching: true))
        #expect(planned.plan.environment == .sandbox)
        #expect(planned.plan.switched)
        // On a history page 4040010 is a verdict, not the plan's.
        #expect(
            ServerAPIAnswer(attempt: answer.attempt, isStatuses: false).planned(Self.started(), now: Self.now).planned
                == nil
        )
    }

    @Test func aHistoryPageWithMoreAsksForTheNextOne() throws {
        var answer = ServerAPIAnswer(attempt: Self.attempt(200), isStatuses: false)
        answer.page = ServerAPIAnswer.HistoryPage(transactions: [], revision: "r2", hasMore: true)
        let planned = try #require(answer.planned(Self.started(), now: Self.now).planned)
        #expect(planned.step == .send(.production, page: "r2", switching: false))
        #expect(planned.plan.page == "r2")
        answer.page = ServerAPIAnswer.HistoryPage(transactions: [], revision: "r3", hasMore: false)
        #expect(answer.planned(planned.plan, now: Self.now).planned?.step == .finished(.lastPage))
    }

    @Test func rateLimitedWaitsForRetryAfterAndRefusalsAreVerdicts() throws {
        let limited = ServerAPIAnswer(
            attempt: Self.attempt(429, errorCode: 4_290_000, retryAfter: Self.now.addingTimeInterval(3)),
            isStatuses: true
        )
        let planned = try #require(limited.planned(Self.started(), now: Self.now).planned)
        #expect(planned.step == .retry(.production, page: nil, afterNanoseconds: 3_000_000_000, failures: 1))
        #expect(planned.plan.failures == 1)
        var refused = ServerAPIAnswer(attempt: Self.attempt(200), isStatuses: true)
        refused.refusal = VerdictReason(.signedDataRefused, detail: "bad signature")
        #expect(refused.planned(Self.started(), now: Self.now).planned == nil)
        // A 200 that is not Apple's shape is worth another try.
        refused.refusal = VerdictReason(.malformedResponse, httpStatus: 200, detail: "cut short")
        #expect(
            refused.planned(Self.started(), now: Self.now).planned?.step
                == .retry(.production, page: nil, afterNanoseconds: 100_000_000, failures: 1)
        )
    }
}
