import CivilTime
import Foundation
import Postgres
import Reconciler
import TestSupport
import Testing

/// kill -9 of a `--source server-api` run against a faulty simulator, then `run --resume`: the
/// subscriptions, the priced ledger and the stored notifications equal those of the same world run
/// once without interruption (docs/architecture.md, "Crash safety and resume" and "Notification
/// history"), and every notification Apple lists for the window is stored exactly once.
@Suite struct ServerAPIResumeTests {
    static let subscriptions = 300
    static let seed: UInt64 = 6161
    /// The first read of notification history looks back this far (the reconciler's default, 7 days).
    static let notificationsLookback: TimeInterval = 7 * 86_400

    /// Transient faults only (each retried until it succeeds, so no item ends unresolved and both worlds
    /// can be compared row by row), plus 5% of the customers whose every answer is forged (refused rows:
    /// deterministic whatever the order of the requests).
    static let simulatorArguments =
        ServerAPIRunTests.simulatorLimits + [
            "--fault-http500", "0.02", "--fault-http503", "0.01", "--fault-reset", "0.01", "--fault-211xx", "0.02",
            "--fault-malformed-json", "0.01", "--fault-truncated", "0.01", "--fault-429", "0.005", "--retry-after", "1",
            "--signature-faulty-subscriptions", "0.05",
        ]
    static let runArguments =
        ServerAPIRunTests.fast + [
            "--batch-size", "40", "--max-attempts", "10", "--request-timeout", "5", "--max-unresolved", "0.5",
        ]

    /// What a run leaves that must not depend on where it was interrupted. Signed columns are compared by
    /// their payload (the simulator's signatures are random, its payloads are not); run ids are all 1.
    struct Snapshot: Sendable, Equatable {
        var subscriptions: [String]
        var ledger: [String]
        var notifications: [String]
        var items: [String]
        /// `subscription_events` without their ids (the identity counts up in commit order): each change's events
        /// once, whatever the crash.
        var events: [String]
        var run: String
        var cursors: [String]
    }

    struct Reference: Sendable {
        var snapshot: Snapshot
        /// Every notificationUUID the simulator lists for the first window, production and sandbox.
        var listed: Set<String>
        var byOutcome: [String: Int]
    }

    static func makeWorld() async throws -> (EndToEndFixture, [String: String]) {
        let world = try await EndToEndFixture(subscriptions: subscriptions, seed: seed, seedPriorRuns: true)
        try await world.startSimulator(simulatorArguments)
        return (world, try world.serverAPIEnvironment())
    }

    static let reference = SharedResult<Reference> {
        let (world, env) = try await makeWorld()
        let outcome = try await world.run(runArguments, extraEnvironment: env)
        guard outcome.status == 0 else { throw FixtureError("reference run failed: \(outcome)") }
        let conn = try world.connect()
        defer { conn.close() }
        let state = try snapshot(conn)
        // The world is worth comparing: several pages of notifications making subscriptions due, forged rows
        // refused, a priced ledger, faults answered and retried.
        let figures = try conn.queryFirst(
            """
            SELECT (SELECT count(*) FROM app_store_notifications) AS notifications,
                   (SELECT count(*) FROM reconciliation_items WHERE due_reason = 'notification') AS notified,
                   (SELECT count(*) FROM reconciliation_items) AS items,
                   (SELECT count(*) FROM subscription_checks WHERE last_error LIKE 'signed_data_refused%') AS refused,
                   (SELECT count(*) FROM subscription_transactions WHERE price_milliunits IS NOT NULL) AS priced
            """
        )
        let notifications = try figures?.decode("notifications", as: Int.self) ?? 0
        let notified = try figures?.decode("notified", as: Int.self) ?? 0
        let items = try figures?.decode("items", as: Int.self) ?? 0
        let refused = try figures?.decode("refused", as: Int.self) ?? 0
        let priced = try figures?.decode("priced", as: Int.self) ?? 0
        let faults = (try await world.simulatorStats()["faults"] as? [String: Int] ?? [:]).values.reduce(0, +)
        print(
            "reference: \(notifications) notifications, \(notified)/\(items) items notified, \(refused) refused, \(priced) priced, \(faults) faults"
        )
        guard notifications > 60, notified > 0, items > 120, refused > 0, priced > 100, faults > 10 else {
            throw FixtureError(
                "reference world too small: \(notifications) notifications, \(notified) of \(items) items from "
                    + "notifications, \(refused) refused rows, \(priced) priced ledger rows, \(faults) faults"
            )
        }
        guard let byOutcome = try world.summary(runId: 1)["by_outcome"] as? [String: Int] else {
            throw FixtureError("summary.json of the reference run has no by_outcome")
        }
        // What Apple lists for the window, read again from a simulator of the same world without faults.
        try await world.startSimulator(ServerAPIRunTests.simulatorLimits)
        let listed = try await listedNotifications(world)
        return Reference(snapshot: state, listed: listed, byOutcome: byOutcome)
    }

    // notifications-page:2: the production window's second page committed, the rest of the pull not read.
    // batch-committed:3: mid-pipeline (the run writes its 300 results in batches of 40).
    // report-folder:1: the run row finished, its report folder written but not yet renamed into place.
    @Test(arguments: ["notifications-page:2", "batch-committed:3", "report-folder:1"])
    func killedServerAPIRunResumesToTheSameState(crashAt: String) async throws {
        let expected = try await Self.reference.get()
        let (world, env) = try await Self.makeWorld()
        var crashEnv = env
        crashEnv["RENEWAL_RECONCILER_CRASH_AT"] = crashAt
        let killed = try await world.run(Self.runArguments, extraEnvironment: crashEnv)
        #expect(killed.killedBySIGKILL, "\(killed)")
        #expect(killed.stderr.contains("crash point \(crashAt) reached"), "\(killed)")

        let conn = try world.connect()
        defer { conn.close() }
        let storedBefore = try conn.count("SELECT count(*) AS n FROM app_store_notifications")
        let pendingBefore = try conn.count(
            "SELECT count(*) AS n FROM reconciliation_items WHERE status = 'pending'"
        )
        switch crashAt {
        case "notifications-page:2":
            #expect(storedBefore > 0 && storedBefore < expected.listed.count, "\(storedBefore) stored")
            #expect(
                try conn.count(
                    """
                    SELECT count(*) AS n FROM notification_cursors
                     WHERE environment = 'Production' AND pagination_token IS NOT NULL
                    """
                ) == 1
            )
        case "batch-committed:3":
            #expect(storedBefore == expected.listed.count)
            #expect(pendingBefore > 0, "the kill came after everything was done")
        default:
            #expect(pendingBefore == 0)
            #expect(try conn.count("SELECT count(*) AS n FROM reconciliation_runs WHERE status = 'completed'") == 1)
            #expect(
                world.reportFolders().allSatisfy { $0.lastPathComponent.hasPrefix(".tmp-") },
                "the folder was never renamed into place: \(world.reportFolders().map(\.lastPathComponent))"
            )
        }

        let resumed = try await world.run(["--resume"], extraEnvironment: env)
        if crashAt.hasPrefix("report") {
            // The run had finished: nothing to resume (exit 64, nothing changed); its report is regenerated.
            #expect(resumed.status == 64, "\(resumed)")
            #expect(resumed.stderr.contains("no interrupted or failed run"), "\(resumed)")
            #expect(resumed.stderr.contains("renewal-reconciler report RUN_ID"), "\(resumed)")
            let report = await world.runReconciler(["report", "1", "--report-dir", world.reportDirectory])
            #expect(report.status == 0, "\(report)")
            // The killed writer's temporary folder is gone; the regenerated folder is in place.
            let folders = world.reportFolders().map(\.lastPathComponent)
            #expect(!folders.contains { $0.hasPrefix(".tmp-") }, "\(folders)")
            #expect(folders.contains { $0.hasSuffix("_run-1") }, "\(folders)")
        } else {
            #expect(resumed.status == 0, "\(resumed)")
            #expect(
                try conn.count(
                    "SELECT count(*) AS n FROM reconciliation_runs WHERE resume_count = 1 AND status = 'completed'"
                ) == 1
            )
            // The resumed pull stores exactly what the killed one had not.
            #expect(
                resumed.stderr.contains(", \(expected.listed.count - storedBefore) stored,"),
                "\(storedBefore) stored before the resume, \(expected.listed.count) listed: \(resumed.stderr.suffix(3000))"
            )
        }
        #expect(try conn.count("SELECT count(*) AS n FROM reconciliation_runs") == 1)

        let actual = try Self.snapshot(conn)
        Self.expectEqual(actual.subscriptions, expected.snapshot.subscriptions, "subscriptions")
        Self.expectEqual(actual.ledger, expected.snapshot.ledger, "subscription_transactions")
        Self.expectEqual(actual.notifications, expected.snapshot.notifications, "app_store_notifications")
        Self.expectEqual(actual.items, expected.snapshot.items, "reconciliation_items")
        Self.expectEqual(actual.events, expected.snapshot.events, "subscription_events")
        #expect(!actual.events.isEmpty, "the world's changes write events")
        #expect(actual.run == expected.snapshot.run)
        #expect(actual.cursors == expected.snapshot.cursors)
        #expect(try world.summary(runId: 1)["by_outcome"] as? [String: Int] == expected.byOutcome)

        // No notification skipped, none twice: the stored uuids are exactly the listed ones, each acted on in
        // this run, and no subscription was made due twice.
        let uuids = try conn.query("SELECT notification_uuid FROM app_store_notifications").map {
            try $0.decode("notification_uuid", as: String.self)
        }
        let missing = expected.listed.subtracting(uuids)
        let unlisted = Set(uuids).subtracting(expected.listed)
        #expect(
            missing.isEmpty && unlisted.isEmpty,
            "\(missing.count) listed but not stored (\(missing.sorted().prefix(3))), \(unlisted.count) stored but not listed"
        )
        #expect(uuids.count == expected.listed.count)
        #expect(
            try conn.count("SELECT count(*) AS n FROM app_store_notifications WHERE first_seen_run_id = 1")
                == uuids.count
        )
        #expect(
            try conn.count(
                "SELECT count(*) - count(DISTINCT subscription_id) AS n FROM reconciliation_items WHERE run_id = 1"
            ) == 0
        )
        #expect(try conn.count("SELECT count(*) AS n FROM reconciliation_items WHERE status <> 'done'") == 0)
    }

    /// Compares two lists of rows, naming the first few that differ.
    static func expectEqual(
        _ actual: [String],
        _ expected: [String],
        _ table: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard actual != expected else { return }
        let missing = Set(expected).subtracting(actual).sorted().prefix(3)
        let extra = Set(actual).subtracting(expected).sorted().prefix(3)
        Issue.record(
            "\(table): \(actual.count) rows, \(expected.count) expected; only expected: \(missing); only here: \(extra)",
            sourceLocation: sourceLocation
        )
    }

    static func snapshot(_ conn: PostgresConnection) throws -> Snapshot {
        func lines(_ sql: String) throws -> [String] {
            try conn.query(sql).map { try $0.decode("line", as: String.self) }
        }
        return Snapshot(
            subscriptions: try lines(
                """
                SELECT ROW(original_transaction_id, user_id, bundle_id, product_id, environment, latest_receipt,
                           expires_at, state, auto_renew, auto_renew_product_id, grace_period_expires_at,
                           expiration_intent, in_billing_retry, is_trial, is_intro_offer, subscription_group_id,
                           latest_transaction_id, revoked_at, cancellation_reason, last_verified_at,
                           last_verify_status, last_apple_status, last_error, version, verified_version,
                           split_part(signed_transaction_info, '.', 2), split_part(signed_renewal_info, '.', 2),
                           history_through)::text AS line
                  FROM subscriptions LEFT JOIN subscription_checks ON subscription_id = id ORDER BY original_transaction_id
                """
            ),
            ledger: try lines(
                """
                SELECT ROW(transaction_id, original_transaction_id, product_id, subscription_group_id,
                           web_order_line_item_id, kind, purchase_date, original_purchase_date, expires_date, is_trial,
                           is_intro_offer, offer, ownership_type, is_upgraded, cancellation_date, cancellation_reason,
                           environment, first_seen_run_id, refund_seen_run_id, price_milliunits, currency, storefront,
                           offer_type, offer_discount_type, revocation_date, revocation_reason, revocation_type,
                           revocation_percentage, transaction_reason, split_part(signed_transaction, '.', 2))::text AS line
                  FROM subscription_transactions ORDER BY transaction_id
                """
            ),
            notifications: try lines(
                """
                SELECT ROW(notification_uuid, notification_type, subtype, environment, bundle_id,
                           original_transaction_id, transaction_id, signed_date, source, subscription_known,
                           first_seen_run_id, signed_payload LIKE 'eyJ%')::text AS line
                  FROM app_store_notifications ORDER BY notification_uuid
                """
            ),
            items: try lines(
                """
                SELECT ROW(run_id, original_transaction_id, status, outcome, due_reason, previous_state, new_state,
                           previous_expires_at, new_expires_at, previous_product_id, product_id, previous_auto_renew,
                           auto_renew, environment, apple_status, expiry_moved_backwards)::text AS line
                  FROM reconciliation_items ORDER BY run_id, original_transaction_id
                """
            ),
            events: try lines(
                """
                SELECT ROW(original_transaction_id, sequence, kind, user_id, app_account_token, before, after, reason,
                           transaction_id, price_milliunits, currency, occurred_at, seen_at, source, run_id)::text AS line
                  FROM subscription_events ORDER BY original_transaction_id, sequence
                """
            ),
            run: try lines(
                """
                SELECT ROW(id, mode, status, as_of, due_count, done_count, unresolved_count, exit_code,
                           scan_completed)::text AS line
                  FROM reconciliation_runs ORDER BY id
                """
            ).joined(separator: "\n"),
            cursors: try lines(
                """
                SELECT ROW(bundle_id, environment, pagination_token IS NULL, completed_through)::text AS line
                  FROM notification_cursors ORDER BY environment
                """
            )
        )
    }

    // MARK: - What the simulator lists

    /// Every notificationUUID Get Notification History lists for the run's first window
    /// (`[as-of - lookback, as-of)`), production and sandbox, paged with curl and a token from
    /// `appstore-simulator token`: a witness that shares no code with the reconciler's reader.
    static func listedNotifications(_ world: EndToEndFixture) async throws -> Set<String> {
        guard let port = world.simulator?.port, let asOf = RFC3339.parse(world.now) else {
            throw FixtureError("no simulator")
        }
        let token = try await capture(
            EndToEndFixture.simulatorBinary,
            ["token", "--seed", String(world.seed), "--bundle-id", EndToEndFixture.bundleId]
        ).trimmingCharacters(in: .whitespacesAndNewlines)
        let end = Int64(asOf.timeIntervalSince1970 * 1000)
        let start = end - Int64(notificationsLookback * 1000)
        let body = "{\"startDate\":\(start),\"endDate\":\(end)}"
        var uuids = Set<String>()
        for base in ["http://127.0.0.1:\(port)", "http://127.0.0.1:\(port)/sandbox"] {
            var pageToken: String?
            var pages = 0
            repeat {
                var url = base + "/inApps/v1/notifications/history"
                if let pageToken {
                    url +=
                        "?paginationToken="
                        + (pageToken.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
                }
                let text = try await capture(
                    "/usr/bin/env",
                    [
                        "curl", "-sf", "-X", "POST", "-H", "Authorization: Bearer \(token)", "-H",
                        "Content-Type: application/json", "--data", body, url,
                    ]
                )
                guard let page = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
                    let history = page["notificationHistory"] as? [[String: Any]]
                else { throw FixtureError("not a notification history page: \(text.prefix(200))") }
                for entry in history {
                    guard let payload = entry["signedPayload"] as? String,
                        let uuid = try decodedPayload(payload)["notificationUUID"] as? String
                    else { throw FixtureError("a notification without a uuid") }
                    #expect(uuids.insert(uuid).inserted, "the simulator listed \(uuid) twice")
                }
                pageToken = page["hasMore"] as? Bool == true ? page["paginationToken"] as? String : nil
                pages += 1
            } while pageToken != nil && pages < 1000
        }
        return uuids
    }

    /// The JSON payload of a compact JWS (its middle part, base64url).
    static func decodedPayload(_ jws: String) throws -> [String: Any] {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw FixtureError("not a compact JWS") }
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64),
            let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { throw FixtureError("a JWS payload that is not JSON") }
        return object
    }

    /// Runs `binary arguments` to the end and returns its standard output (exit 0 required).
    static func capture(_ binary: String, _ arguments: [String]) async throws -> String {
        let outcome = try await ChildProcess.run(binary, arguments)
        guard outcome.status == 0 else {
            throw FixtureError("\(binary) \(arguments.first ?? "") exited \(outcome.status)")
        }
        return outcome.stdout
    }
}
