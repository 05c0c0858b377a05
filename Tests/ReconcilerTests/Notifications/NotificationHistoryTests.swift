import CivilTime
import Foundation
import Postgres
import Reconciler
import TestSupport
import Testing

/// Get Notification History against the simulator, end to end through `renewal-reconciler run` and
/// `notifications import` (docs/architecture.md, "Notification history").
@Suite struct NotificationHistoryTests {
    static let subscriptions = 300
    static let seed: UInt64 = 4242

    /// The In-App Purchase key, ids, URLs and root of the simulator's population (its export's server-api/).
    static func serverAPIEnvironment(_ world: EndToEndFixture) throws -> [String: String] {
        let dir = world.directory.appendingPathComponent("server-api")
        let data = try Data(contentsOf: dir.appendingPathComponent("api.json"))
        let api = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let port = try #require(world.simulator?.port)
        return [
            "APPLE_PRIVATE_KEY_FILE": dir.appendingPathComponent("key.p8").path,
            "APPLE_KEY_ID": try #require(api["key_id"] as? String),
            "APPLE_ISSUER_ID": try #require(api["issuer_id"] as? String),
            "APPLE_APP_APPLE_ID": String(describing: try #require(api["app_apple_id"])),
            "APPLE_SERVER_API_URL": "http://127.0.0.1:\(port)",
            "APPLE_SERVER_API_SANDBOX_URL": "http://127.0.0.1:\(port)/sandbox",
            "APPLE_ROOT_CA_FILE": dir.appendingPathComponent("root.pem").path,
            "APPLE_ROOT_CA_ONLY": "1",
        ]
    }

    static let runArguments = ["--source", "verify-receipt", "--rate", "2000", "--concurrency", "64"]

    /// A world whose every subscription was verified an hour ago and expires far ahead: the scan selects
    /// nothing, so every item of the run comes from a notification. Every tenth row is deleted, so some
    /// notifications name a subscription the table does not have.
    static func makeWorld(_ simulatorArguments: [String] = []) async throws -> EndToEndFixture {
        let world = try await EndToEndFixture(subscriptions: subscriptions, seed: seed)
        try await world.startSimulator(simulatorArguments)
        let conn = try world.connect()
        defer { conn.close() }
        try conn.execute(
            """
            UPDATE subscriptions SET state = 'active', expires_at = '2031-01-01T00:00:00Z'
            """
        )
        try conn.execute(
            """
            INSERT INTO subscription_checks (subscription_id, last_verified_at)
            SELECT id, $1::timestamptz - interval '1 hour' FROM subscriptions
            ON CONFLICT (subscription_id) DO UPDATE SET last_verified_at = EXCLUDED.last_verified_at
            """,
            [RFC3339.parse(world.now)]
        )
        try conn.execute("DELETE FROM subscriptions WHERE id % 10 = 0")
        return world
    }

    /// What the notification tables and the first run's items hold, comparable between worlds. The cursor's
    /// last window is left out: a resumed run that finds the interrupted window finished reads the last hour
    /// again (nothing new in it), so only where the cursor stands is compared.
    struct Snapshot: Equatable {
        var notifications: [String]
        var items: [String]
        var cursors: [String]
        var dueCount: Int
    }

    static func snapshot(_ conn: PostgresConnection) throws -> Snapshot {
        Snapshot(
            notifications: try conn.query(
                """
                SELECT concat_ws('|', notification_uuid, notification_type, subtype, environment, original_transaction_id,
                                 transaction_id, signed_date, source, subscription_known, first_seen_run_id) AS line
                  FROM app_store_notifications ORDER BY notification_uuid
                """
            ).map { try $0.decode("line", as: String.self) },
            items: try conn.query(
                """
                SELECT concat_ws('|', run_id, original_transaction_id, due_reason, previous_state, previous_expires_at) AS line
                  FROM reconciliation_items ORDER BY run_id, original_transaction_id
                """
            ).map { try $0.decode("line", as: String.self) },
            cursors: try conn.query(
                """
                SELECT concat_ws('|', bundle_id, environment, pagination_token IS NULL, completed_through) AS line
                  FROM notification_cursors ORDER BY environment
                """
            ).map { try $0.decode("line", as: String.self) },
            dueCount: try conn.count("SELECT due_count AS n FROM reconciliation_runs WHERE id = 1")
        )
    }

    static let reference = SharedResult<Snapshot> {
        let world = try await makeWorld()
        let outcome = try await world.run(runArguments, extraEnvironment: try serverAPIEnvironment(world))
        guard outcome.status == 0 else { throw FixtureError("reference run failed: \(outcome)") }
        let conn = try world.connect()
        defer { conn.close() }
        return try snapshot(conn)
    }

    @Test func pullStoresEachNotificationOnceAndMakesTheNamedSubscriptionsDue() async throws {
        let world = try await Self.makeWorld()
        let env = try Self.serverAPIEnvironment(world)
        let first = try await world.run(Self.runArguments, extraEnvironment: env)
        #expect(first.status == 0, "\(first)")
        #expect(first.stderr.contains("notification history:"))
        let conn = try world.connect()
        defer { conn.close() }

        let stored = try conn.count("SELECT count(*) AS n FROM app_store_notifications")
        #expect(stored > 40, "several pages of 20 expected, got \(stored)")
        #expect(
            try conn.count("SELECT count(*) AS n FROM app_store_notifications WHERE first_seen_run_id = 1") == stored
        )
        #expect(try conn.count("SELECT count(*) AS n FROM app_store_notifications WHERE source = 'history'") == stored)

        // Every item comes from a notification (the scan selects nothing here), one per known subscription named.
        let items = try conn.count("SELECT count(*) AS n FROM reconciliation_items WHERE run_id = 1")
        let named = try conn.count(
            """
            SELECT count(DISTINCT original_transaction_id) AS n FROM app_store_notifications
             WHERE subscription_known AND original_transaction_id IS NOT NULL
            """
        )
        #expect(items > 0 && items == named, "\(items) items, \(named) known subscriptions named")
        #expect(
            try conn.count(
                "SELECT count(*) AS n FROM reconciliation_items WHERE due_reason IS DISTINCT FROM 'notification'"
            ) == 0
        )
        #expect(
            try conn.count(
                """
                SELECT count(*) AS n FROM reconciliation_items
                 WHERE previous_expires_at = '2031-01-01T00:00:00Z' AND status = 'done'
                """
            ) == items,
            "subscriptions expiring years ahead are due because a notification named them"
        )
        #expect(try conn.count("SELECT due_count AS n FROM reconciliation_runs WHERE id = 1") == items)

        // Unknown subscriptions: stored, flagged, never inserted as rows or items.
        let unknown = try conn.count(
            """
            SELECT count(DISTINCT original_transaction_id) AS n FROM app_store_notifications
             WHERE NOT subscription_known AND original_transaction_id IS NOT NULL
            """
        )
        #expect(unknown > 0, "every tenth subscription was deleted; some notification names one")
        #expect(
            try conn.count(
                """
                SELECT count(*) AS n FROM app_store_notifications n
                 WHERE NOT subscription_known
                   AND EXISTS (SELECT 1 FROM subscriptions s WHERE s.original_transaction_id = n.original_transaction_id)
                """
            ) == 0
        )
        #expect(first.stderr.contains("\(unknown) unknown subscriptions"), "\(first.stderr.suffix(2000))")

        // The cursor is at the run's as-of, no page pending; payloads never reach the log.
        let cursor = try #require(
            try conn.queryFirst(
                """
                SELECT completed_through, pagination_token FROM notification_cursors
                 WHERE environment = 'Production'
                """
            )
        )
        #expect(try cursor.decode("completed_through", as: Date?.self) == RFC3339.parse(world.now))
        #expect(try cursor.decode("pagination_token", as: String?.self) == nil)
        let somePayload = try #require(
            try conn.queryFirst("SELECT signed_payload FROM app_store_notifications LIMIT 1")?
                .decode("signed_payload", as: String.self)
        )
        #expect(!first.stderr.contains(String(somePayload.suffix(40))))

        // The second run reads the last hour again: nothing is stored or made due twice.
        let second = try await world.run(Self.runArguments, extraEnvironment: env)
        #expect(second.status == 0, "\(second)")
        #expect(try conn.count("SELECT count(*) AS n FROM app_store_notifications") == stored)
        #expect(try conn.count("SELECT count(*) AS n FROM app_store_notifications WHERE first_seen_run_id = 2") == 0)
        #expect(
            try conn.count(
                "SELECT count(*) AS n FROM reconciliation_items WHERE run_id = 2 AND due_reason = 'notification'"
            ) == 0
        )
        #expect(second.stderr.contains(" 0 stored"), "\(second.stderr.suffix(2000))")

        // A subscription whose item got no answer (as if it ended unresolved: not verified since run 1's as-of) is
        // due again: Apple announces a change once.
        let missed = try #require(
            try conn.queryFirst(
                """
                SELECT n.original_transaction_id FROM app_store_notifications n
                  JOIN subscriptions s ON s.original_transaction_id = n.original_transaction_id
                 ORDER BY n.original_transaction_id LIMIT 1
                """
            )?.decode("original_transaction_id", as: String.self)
        )
        try conn.execute(
            """
            UPDATE subscription_checks SET last_verified_at = last_verified_at - interval '2 days'
             WHERE subscription_id = (SELECT id FROM subscriptions WHERE original_transaction_id = $1)
            """,
            [missed]
        )
        let third = try await world.run(Self.runArguments, extraEnvironment: env)
        #expect(third.status == 0, "\(third)")
        let again = try conn.query(
            "SELECT original_transaction_id FROM reconciliation_items WHERE run_id = 3 AND due_reason = 'notification'"
        ).map { try $0.decode("original_transaction_id", as: String.self) }
        #expect(again == [missed])
    }

    /// kill -9 after a page commits (the first, a middle one), and before the scan (the pull done), then
    /// `--resume`: the same notifications, items and cursor as a run never interrupted.
    @Test(arguments: ["notifications-page:1", "notifications-page:3", "scan-page:1"])
    func killedPullResumesToTheSameState(crashAt: String) async throws {
        let expected = try await Self.reference.get()
        let world = try await Self.makeWorld()
        let env = try Self.serverAPIEnvironment(world)
        var crashEnv = env
        crashEnv["RENEWAL_RECONCILER_CRASH_AT"] = crashAt
        let killed = try await world.run(Self.runArguments, extraEnvironment: crashEnv)
        #expect(killed.killedBySIGKILL, "\(killed)")
        let conn = try world.connect()
        defer { conn.close() }
        if crashAt.hasPrefix("notifications") {
            #expect(
                try conn.count("SELECT count(*) AS n FROM notification_cursors WHERE pagination_token IS NOT NULL") == 1
            )
        }
        let resumed = try await world.run(Self.runArguments + ["--resume"], extraEnvironment: env)
        #expect(resumed.status == 0, "\(resumed)")
        #expect(try conn.count("SELECT count(*) AS n FROM reconciliation_runs") == 1)
        let actual = try Self.snapshot(conn)
        #expect(actual.notifications == expected.notifications)
        #expect(actual.items == expected.items)
        #expect(actual.cursors == expected.cursors)
        #expect(actual.dueCount == expected.dueCount)
    }

    /// A payload whose signature does not verify is refused with its reason, not stored, and makes nothing due.
    @Test func tamperedPayloadsAreRefusedAndNotStored() async throws {
        let world = try await Self.makeWorld(["--fault-tampered-payload", "1"])
        let outcome = try await world.run(Self.runArguments, extraEnvironment: try Self.serverAPIEnvironment(world))
        #expect(outcome.status == 0, "\(outcome)")
        let conn = try world.connect()
        defer { conn.close() }
        #expect(try conn.count("SELECT count(*) AS n FROM app_store_notifications") == 0)
        #expect(try conn.count("SELECT count(*) AS n FROM reconciliation_items") == 0)
        #expect(outcome.stderr.contains("payload refused"))
        #expect(outcome.stderr.contains("refused (bad_signature="), "\(outcome.stderr.suffix(2000))")
    }

    /// `notifications import`: good lines stored once (bare or as JSON), bad lines named by number, exit 64;
    /// the next run takes them over and makes their subscriptions due.
    @Test func importStoresGoodLinesNamesBadOnesAndTheNextRunActsOnThem() async throws {
        let world = try await Self.makeWorld()
        let env = try Self.serverAPIEnvironment(world)
        let first = try await world.run(Self.runArguments, extraEnvironment: env)
        #expect(first.status == 0, "\(first)")
        let conn = try world.connect()
        defer { conn.close() }
        // Two notifications about known subscriptions, older than the next run's overlap, taken out again.
        let rows = try conn.query(
            """
            SELECT notification_uuid, signed_payload, original_transaction_id FROM app_store_notifications
             WHERE subscription_known AND signed_date < $1::timestamptz - interval '3 hours'
             ORDER BY notification_uuid LIMIT 2
            """,
            [RFC3339.parse(world.now)]
        )
        try #require(rows.count == 2)
        let payloads = try rows.map { try $0.decode("signed_payload", as: String.self) }
        let uuids = try rows.map { try $0.decode("notification_uuid", as: String.self) }
        try conn.execute(
            "DELETE FROM app_store_notifications WHERE notification_uuid = ANY($1::text[])",
            [uuids.map { Optional($0) }]
        )
        var tampered = Array(payloads[0])
        let last = tampered.count - 5
        tampered[last] = tampered[last] == "A" ? "B" : "A"
        let lines = [
            payloads[0],
            "{\"signedPayload\": \"\(payloads[1])\"}",
            "not a notification",
            "",
            String(tampered),
            payloads[0],
            "{\"other\": 1}",
        ]
        let file = world.directory.appendingPathComponent("webhook.jsonl")
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: file)

        let imported = await world.runReconciler(
            ["notifications", "import", "--file", file.path],
            extraEnvironment: env
        )
        #expect(imported.status == 64, "\(imported)")
        #expect(imported.stderr.contains("line 3:"), "\(imported.stderr)")
        #expect(imported.stderr.contains("line 5: refused: bad_signature"), "\(imported.stderr)")
        #expect(imported.stderr.contains("line 7:"), "\(imported.stderr)")
        #expect(!imported.stderr.contains("line 6:") && !imported.stderr.contains("line 4:"))
        #expect(imported.stdout.contains("6 notifications read, 2 stored, 1 already stored, 3 refused"), "\(imported)")
        #expect(!imported.stderr.contains(String(payloads[0].suffix(40))))
        #expect(
            try conn.count(
                """
                SELECT count(*) AS n FROM app_store_notifications
                 WHERE source = 'import' AND first_seen_run_id IS NULL AND notification_uuid = ANY($1::text[])
                """,
                [uuids.map { Optional($0) }]
            ) == 2
        )

        let second = try await world.run(Self.runArguments, extraEnvironment: env)
        #expect(second.status == 0, "\(second)")
        #expect(second.stderr.contains("2 imported taken over"), "\(second.stderr.suffix(2000))")
        #expect(
            try conn.count(
                "SELECT count(*) AS n FROM app_store_notifications WHERE source = 'import' AND first_seen_run_id = 2"
            ) == 2
        )
        let otids = try rows.map { try $0.decode("original_transaction_id", as: String.self) }
        #expect(
            try conn.count(
                """
                SELECT count(*) AS n FROM reconciliation_items
                 WHERE run_id = 2 AND due_reason = 'notification' AND original_transaction_id = ANY($1::text[])
                """,
                [otids.map { Optional($0) }]
            ) == Set(otids).count
        )
    }

    /// Apple's limit on the endpoint (here 1 a second) answers 429 with a Retry-After; the pull waits and
    /// still reads everything.
    @Test func rateLimitedHistoryWaitsAndReadsEverything() async throws {
        let expected = try await Self.reference.get()
        let world = try await Self.makeWorld(["--max-rps-notification-history", "1"])
        let outcome = try await world.run(Self.runArguments, extraEnvironment: try Self.serverAPIEnvironment(world))
        #expect(outcome.status == 0, "\(outcome)")
        let conn = try world.connect()
        defer { conn.close() }
        #expect(try Self.snapshot(conn).notifications == expected.notifications)
    }
}
