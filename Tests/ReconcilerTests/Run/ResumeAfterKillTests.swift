import Foundation
import Postgres
import Reconciler
import TestSupport
import Testing

/// kill -9 at three points of a run, then `run --resume`: the end state equals an uninterrupted run's.
@Suite struct ResumeAfterKillTests {
    static let subscriptions = 600
    static let seed: UInt64 = 909

    /// What an uninterrupted run leaves, computed once for all crash points.
    struct EndState: Sendable, Equatable {
        var subscriptions: [String]
        var ledger: [String]
        var outcomes: [String: Int]
    }

    static let reference = SharedResult<EndState> {
        let world = try await EndToEndFixture(subscriptions: subscriptions, seed: seed)
        try await world.startSimulator()
        let outcome = try await world.run(["--rate", "2000", "--concurrency", "64", "--batch-size", "100"])
        guard outcome.status == 0 else { throw FixtureError("reference run failed: \(outcome)") }
        return try endState(world, runId: 1)
    }

    // scan-page:2 is the first page of the expiry-window phase (page 1 is the never-verified phase, all
    // 600 rows); the run commits results in batches of 100, so batch 3 is mid-run and 5 of 6 near the end.
    @Test(arguments: ["scan-page:2", "batch-write:3", "batch-committed:5"])
    func killedRunResumesToTheSameEndState(crashAt: String) async throws {
        let expected = try await Self.reference.get()
        let world = try await EndToEndFixture(subscriptions: Self.subscriptions, seed: Self.seed)
        try await world.startSimulator()
        let killed = try await world.run(
            ["--rate", "2000", "--concurrency", "64", "--batch-size", "100"],
            extraEnvironment: ["RENEWAL_RECONCILER_CRASH_AT": crashAt]
        )
        #expect(killed.killedBySIGKILL, "\(killed)")
        #expect(killed.stderr.contains("crash point \(crashAt) reached"))

        let conn = try world.connect()
        defer { conn.close() }
        let pendingBefore = try conn.count(
            "SELECT count(*) AS n FROM reconciliation_items WHERE status = 'pending'"
        )
        let doneBefore = try conn.count("SELECT count(*) AS n FROM reconciliation_items WHERE status = 'done'")
        #expect(doneBefore < Self.subscriptions, "the kill came after everything was done")
        if crashAt.hasPrefix("batch") { #expect(pendingBefore > 0) }

        let resumed = try await world.run(["--resume"])
        #expect(resumed.status == 0, "\(resumed)")
        #expect(try conn.count("SELECT count(*) AS n FROM reconciliation_runs") == 1)
        #expect(
            try conn.count(
                "SELECT count(*) AS n FROM reconciliation_runs WHERE resume_count = 1 AND status = 'completed'"
            ) == 1
        )
        let actual = try Self.endState(world, runId: 1)
        #expect(actual.subscriptions == expected.subscriptions)
        #expect(actual.ledger == expected.ledger)
        #expect(actual.outcomes == expected.outcomes)
        #expect(actual.outcomes.values.reduce(0, +) == Self.subscriptions)
        let truth = try world.compareWithTruth()
        let comparable = try world.comparableTruthCount()
        #expect(truth.matched == truth.compared && truth.compared == comparable)
        #expect(try world.accountNotFoundProblems().problems.isEmpty)

        // The requests of both sessions are counted: each batch recorded the requests made so far, so the killed
        // session's count survives up to its last batch. Every request behind a written result is in the total
        // (before, the resumed run counted only its own); no request is counted that Apple did not see.
        let reported = try conn.count("SELECT (apple_stats->>'requests')::int AS n FROM reconciliation_runs")
        let behindResults = try conn.count("SELECT sum(attempts)::int AS n FROM reconciliation_items")
        let seen = try #require(try await world.simulatorStats()["requests_total"] as? Int)
        #expect(reported >= behindResults, "\(reported) requests reported, \(behindResults) behind the results")
        #expect(reported <= seen, "\(reported) requests reported, the simulator saw \(seen)")
    }

    static func endState(_ world: EndToEndFixture, runId: Int64) throws -> EndState {
        let conn = try world.connect()
        defer { conn.close() }
        let subs = try conn.query(
            """
            SELECT concat_ws('|', original_transaction_id, user_id, product_id, environment, latest_receipt, expires_at,
                   state, auto_renew, auto_renew_product_id, grace_period_expires_at, expiration_intent,
                   in_billing_retry, is_trial, is_intro_offer, subscription_group_id, latest_transaction_id,
                   revoked_at, cancellation_reason, last_verified_at, last_verify_status, last_apple_status,
                   version) AS line
              FROM subscriptions LEFT JOIN subscription_checks ON subscription_id = id ORDER BY original_transaction_id
            """
        ).map { try $0.decode("line", as: String.self) }
        let ledger = try conn.query(
            """
            SELECT concat_ws('|', transaction_id, original_transaction_id, product_id, kind, purchase_date,
                   expires_date, is_trial, is_intro_offer, offer, is_upgraded, cancellation_date, cancellation_reason,
                   environment, first_seen_run_id, refund_seen_run_id) AS line
              FROM subscription_transactions ORDER BY transaction_id
            """
        ).map { try $0.decode("line", as: String.self) }
        let summary = try world.summary(runId: runId)
        guard let outcomes = summary["by_outcome"] as? [String: Int] else {
            throw FixtureError("summary.json of run \(runId) has no by_outcome")
        }
        return EndState(subscriptions: subs, ledger: ledger, outcomes: outcomes)
    }
}
