import AppStoreClient
import AppStoreSimulator
import Foundation
import ReceiptDomain
import Testing

/// Every fault the simulator can inject, sent through the real client and classified as
/// `docs/decision-rules.md` says (each fault at rate 1.0, so every request gets it).
@Suite struct FaultClassificationTests {
    /// One request to a simulator whose every request gets `kind`.
    private func faulted(
        _ kind: FaultKind,
        scenario: Scenario = .silentRenewal,
        requestTimeout: Duration = .seconds(20),
        plan: (inout FaultPlan) -> Void = { _ in }
    ) async throws -> VerifyAttemptResult {
        try await withHarness(
            requestTimeout: requestTimeout,
            configure: { c in
                c.faults = FaultPlan(seed: c.seed, rates: [kind: 1.0])
                plan(&c.faults)
            }
        ) { h in
            let result = await h.send(try h.receipt(scenario), to: .production)
            let json = try JSONSerialization.jsonObject(with: Data(h.server.stats.json())) as? [String: Any]
            let faults = try #require(json?["faults"] as? [String: Int])
            #expect(faults[kind.rawValue] ?? 0 >= 1, "the simulator did not inject \(kind)")
            return result
        }
    }

    private func retryReason(
        _ result: VerifyAttemptResult,
        sourceLocation: SourceLocation = #_sourceLocation
    )
        -> VerdictReason?
    {
        guard case .retry(let reason, _) = result.verdict else {
            Issue.record("expected retry, got \(result.verdict)", sourceLocation: sourceLocation)
            return nil
        }
        return reason
    }

    @Test(arguments: [(FaultKind.http500, 500), (.http503, 503)])
    func httpServerErrorsRetry(kind: FaultKind, status: Int) async throws {
        let result = try await faulted(kind)
        #expect(result.httpStatus == status)
        #expect(result.transportFailure == nil)
        let reason = retryReason(result)
        #expect(reason?.code == .httpServerError)
        #expect(reason?.httpStatus == status)
    }

    @Test func http429RetriesNotBeforeRetryAfter() async throws {
        let before = Date()
        let result = try await faulted(.http429) { $0.retryAfterSeconds = 7 }
        #expect(result.httpStatus == 429)
        guard case .retry(let reason, let earliest) = result.verdict else {
            Issue.record("expected retry, got \(result.verdict)")
            return
        }
        #expect(reason.code == .httpRateLimited)
        let at = try #require(earliest, "429 with Retry-After must set earliest")
        #expect(at >= before.addingTimeInterval(6))
        #expect(at <= Date().addingTimeInterval(8))

        // The plan's wait is Apple's earliest time, counted from when the answer is planned on (its own backoff of at
        // most 100 ms is shorter).
        var plan = VerificationAttempt(
            policy: AttemptPolicy(maxAttempts: 3, base: .milliseconds(100), cap: .milliseconds(100))
        )
        _ = plan.start()
        // Planned 5 s before Apple's time (a fixed instant: a loaded machine may take longer than that to get here).
        let planned = at.addingTimeInterval(-5)
        #expect(
            plan.next(after: result.verdict, now: planned)
                == .retry(
                    .production,
                    failures: 1,
                    afterNanoseconds: UInt64(at.timeIntervalSince(planned) * 1e9),
                    reason: reason
                )
        )
    }

    @Test func connectionResetRetriesAsTransport() async throws {
        let result = try await faulted(.reset)
        #expect(result.httpStatus == nil)
        #expect(result.transportFailure == .connectionReset)
        #expect(retryReason(result)?.code == .transport)
    }

    @Test func hangPastTheRequestTimeoutRetriesAsTransportTimeout() async throws {
        let result = try await faulted(.hang, requestTimeout: .milliseconds(300)) { $0.hangMilliseconds = 8_000 }
        // The client gave up on its own 300 ms timeout, long before the simulator would have closed the
        // connection after 8 s (the bound is loose on purpose: a loaded CI machine must not make this flaky;
        // the harness's teardown waits for the hanging connection, so only the request itself is timed).
        #expect(result.elapsed < .seconds(6))
        #expect(result.httpStatus == nil)
        #expect(result.transportFailure == .timeout)
        let reason = retryReason(result)
        #expect(reason?.code == .transport)
        #expect(reason?.detail == "timeout")
    }

    @Test func status21005Retries() async throws {
        let result = try await faulted(.status21005)
        #expect(result.appleStatus == 21005)
        #expect(retryReason(result)?.code == .serverUnavailable)
    }

    @Test func transient21002Retries() async throws {
        let result = try await faulted(.status21002)
        #expect(result.appleStatus == 21002)
        #expect(retryReason(result)?.code == .receiptMalformedOrTemporary)
    }

    @Test func malformedJSONRetriesAsMalformedResponse() async throws {
        let result = try await faulted(.malformedJSON)
        #expect(result.httpStatus == 200)
        let reason = retryReason(result)
        #expect(reason?.code == .malformedResponse)
        #expect(reason?.httpStatus == 200)
    }

    @Test func truncatedBodyRetries() async throws {
        let result = try await faulted(.truncated)
        let reason = retryReason(result)
        // Content-Length promised more than arrived: libcurl reports the short read (a broken exchange).
        #expect(reason?.code == .transport)
        #expect(result.transportFailure == .connectionReset)
    }

    /// The simulator cycles six 211xx variants by request number: `is_retryable` true, "true",
    /// `is-retryable` "1", `is-retryable` true, absent, `is_retryable` false.
    @Test func internalDataAccess211xxRetriesUnlessMarkedNotRetryable() async throws {
        try await withHarness(configure: { c in c.faults = FaultPlan(seed: c.seed, rates: [.status211xx: 1.0]) }) { h in
            let receipt = try h.receipt(.silentRenewal)
            var results: [VerifyAttemptResult] = []
            for _ in 0..<6 { results.append(await h.send(receipt, to: .production)) }
            for (n, result) in results.enumerated() {
                let status = try #require(result.appleStatus, "request \(n) has no Apple status")
                #expect((21100...21199).contains(status))
                if n == 5 {
                    #expect(
                        result.verdict == .unresolved(VerdictReason(.internalDataAccessPermanent, appleStatus: status)),
                        "request \(n)"
                    )
                } else {
                    #expect(
                        result.verdict
                            == .retry(VerdictReason(.internalDataAccess, appleStatus: status), earliest: nil),
                        "request \(n)"
                    )
                }
            }
        }
    }

    /// One 21004 rejects that receipt; whether 21004s are systematic (a wrong secret) is the run's call.
    @Test func wrongSharedSecretRejectsTheReceipt() async throws {
        for password in ["not-the-secret", nil] as [String?] {
            try await withHarness(password: password) { h in
                let result = await h.send(try h.receipt(.silentRenewal), to: .production)
                #expect(result.verdict == .reject(VerdictReason(.sharedSecretMismatch, appleStatus: 21004)))
                var plan = VerificationAttempt(maxAttempts: 3)
                _ = plan.start()
                #expect(
                    plan.next(after: result.verdict, now: Date())
                        == .finished(.rejected(VerdictReason(.sharedSecretMismatch, appleStatus: 21004)))
                )
                // The description names the problem but never the secret.
                let text = result.verdict.reason.map { String(describing: $0) } ?? ""
                #expect(!text.contains("not-the-secret"))
            }
        }
    }

    @Test(arguments: [
        (Scenario.unauthenticatable, 21003, VerdictReason.Code.receiptNotAuthenticated),
        (.deletedAccount, 21010, .accountNotFound),
    ])
    func permanentStatusesReject(scenario: Scenario, status: Int, code: VerdictReason.Code) async throws {
        try await withHarness { h in
            let outcome = await h.client.verify(receipt: try h.receipt(scenario), maxAttempts: 3)
            #expect(outcome.final == .rejected(VerdictReason(code, appleStatus: status)))
            #expect(outcome.attempts.count == 1, "a permanent rejection is never retried")
            #expect(try h.totalRequests() == 1)
        }
    }

    /// A receipt of another app is valid as far as Apple is concerned: the client says ok and the
    /// decision engine (not the client) rejects the bundle mismatch.
    @Test func bundleMismatchIsNotTheClientsBusiness() async throws {
        try await withHarness { h in
            let outcome = await h.client.verify(receipt: try h.receipt(.foreignApp))
            guard case .ok(let response, _) = outcome.final else {
                Issue.record("expected ok, got \(outcome.final)")
                return
            }
            let bundle = try #require(response.receipt?.bundleId)
            #expect(bundle != h.server.population.bundleId)
            #expect(outcome.attempts.count == 1)
        }
    }
}
