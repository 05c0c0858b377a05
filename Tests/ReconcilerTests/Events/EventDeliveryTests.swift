import Foundation
import Postgres
import TestSupport
import Testing

/// `events deliver` against an independent receiver (Python, `WebhookReceiver`) and a real PostgreSQL
/// (docs/events.md, "Delivery"): every signature verifies, every event arrives, duplicates only with the same id,
/// each subscription's events in order, whatever the receiver does (down, 5xx, 4xx, slow) and a kill -9 of the
/// deliverer mid-batch; a wrong secret or URL is a clear error that loses nothing.
@Suite struct EventDeliveryTests {
    static let secret = "whsec_" + Data((0..<32).map { UInt8($0 * 7 % 256) }).base64EncodedString()
    static let subscriptions: [Int64] = [11, 12, 13, 14]
    static let perSubscription = 3

    /// A migrated database holding 4 subscriptions' 3 events each, inserted as the run's writer inserts them.
    static func world() async throws -> (EndToEndFixture, PostgresConnection, String) {
        let fixture = try await EndToEndFixture(subscriptions: 0)
        let conn = try fixture.connect()
        for id in subscriptions {
            for sequence in 1...perSubscription {
                try conn.execute(
                    """
                    INSERT INTO subscription_events (subscription_id, sequence, kind, original_transaction_id, user_id,
                                                     before, after, seen_at, source)
                    VALUES ($1, $2, $3, $4, 'user', '{"state": "active"}', '{"state": "active"}', now(), 'run')
                    """,
                    [id, Int64(sequence), ["renewal", "auto_renew_off", "expiration"][sequence - 1], "otid-\(id)"]
                )
            }
        }
        let secretFile = fixture.directory.appendingPathComponent("webhook-secret").path
        try secret.write(toFile: secretFile, atomically: true, encoding: .utf8)
        return (fixture, conn, secretFile)
    }

    static func deliver(
        _ fixture: EndToEndFixture,
        _ url: String,
        _ secretFile: String,
        _ extra: [String] = []
    )
        async -> ProcessOutcome
    {
        await fixture.runReconciler(
            ["events", "deliver", "--once", "--url", url, "--secret-file", secretFile, "--first-retry", "0"] + extra
        )
    }

    static func status(_ conn: PostgresConnection) throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for row in try conn.query("SELECT delivery_status AS s, count(*) AS n FROM subscription_events GROUP BY 1") {
            counts[try row.decode("s")] = try row.decode("n", as: Int.self)
        }
        return counts
    }

    /// Every event at least once, any duplicate with the same id, and per subscription the events' first arrivals in
    /// sequence order.
    static func expectComplete(_ received: [[String: Any]]) {
        var firsts: [Int64: [Int]] = [:]
        var seen = Set<String>()
        for record in received {
            let id = record["id"] as? String ?? ""
            #expect(record["event_id"] as? String == id, "the body names the webhook's id")
            #expect(record["type"] as? String == "subscription.\(record["kind"] as? String ?? "")")
            guard seen.insert(id).inserted else { continue }
            firsts[(record["subscription_id"] as? NSNumber)?.int64Value ?? 0, default: []].append(
                record["sequence"] as? Int ?? 0
            )
        }
        #expect(seen.count == subscriptions.count * perSubscription, "\(seen.count) distinct events")
        for id in subscriptions {
            #expect(firsts[id] == Array(1...perSubscription), "subscription \(id): \(firsts[id] ?? [])")
        }
    }

    @Test func everyEventArrivesVerifiedInOrderThroughFailures() async throws {
        let (fixture, conn, secretFile) = try await Self.world()
        defer { conn.close() }
        let receiver = try await WebhookReceiver(secret: Self.secret, mode: "flaky:5")
        let outcome = await Self.deliver(fixture, receiver.url, secretFile)
        #expect(outcome.status == 0, "\(outcome)")
        #expect(outcome.stdout.contains("12 delivered"), "\(outcome.stdout)")
        #expect(receiver.records("attempts.jsonl").filter { $0["status"] as? Int == 503 }.count == 5)
        #expect(
            receiver.records("attempts.jsonl").allSatisfy { $0["status"] as? Int != 401 },
            "every signature verifies"
        )
        Self.expectComplete(receiver.records())
        #expect(try Self.status(conn) == ["delivered": 12])
        // Nothing left: a second pass sends nothing.
        let again = await Self.deliver(fixture, receiver.url, secretFile)
        #expect(again.status == 0 && again.stdout.contains("0 delivered"), "\(again)")
        #expect(receiver.records().count == 12)
    }

    @Test func aReceiverDownOrRefusingKeepsEventsPendingOrDeadUntilReplayed() async throws {
        let (fixture, conn, secretFile) = try await Self.world()
        defer { conn.close() }
        // Nobody listening: exit 69, each subscription's first event failed once, nothing delivered or lost.
        let down = await Self.deliver(fixture, "http://127.0.0.1:9/hooks", secretFile, ["--first-retry", "60"])
        #expect(down.status == 69, "\(down)")
        #expect(try Self.status(conn) == ["pending": 12])
        // A receiver answering 400: after --max-attempts the subscriptions' first events are dead, exit 1; the
        // events after them wait.
        let receiver = try await WebhookReceiver(secret: Self.secret, mode: "400")
        try conn.execute("UPDATE subscription_events SET next_attempt_at = NULL")
        let refused = await Self.deliver(fixture, receiver.url, secretFile, ["--max-attempts", "2"])
        #expect(refused.status == 1, "\(refused)")
        #expect(try Self.status(conn) == ["dead": 4, "pending": 8])
        let error = try #require(
            try conn.queryFirst(
                "SELECT last_delivery_error AS e FROM subscription_events WHERE delivery_status = 'dead'"
            )
        )
        #expect(try error.decode("e", as: String.self) == "the receiver answered 400")
        // Fixed and replayed: everything arrives, in order.
        try receiver.set(mode: "ok")
        let replay = await fixture.runReconciler(["events", "replay"])
        #expect(replay.status == 0 && replay.stdout.contains("4 dead events pending again"), "\(replay)")
        let delivered = await Self.deliver(fixture, receiver.url, secretFile)
        #expect(delivered.status == 0, "\(delivered)")
        Self.expectComplete(receiver.records())
        #expect(try Self.status(conn) == ["delivered": 12])
    }

    @Test func aWrongOrMissingSecretOrAPlainURLIsAClearErrorThatLosesNothing() async throws {
        let (fixture, conn, secretFile) = try await Self.world()
        defer { conn.close() }
        let receiver = try await WebhookReceiver(secret: Self.secret)
        let plain = await Self.deliver(fixture, "http://receiver.example.com/hooks", secretFile)
        #expect(plain.status == 64 && plain.stderr.contains("must be https://"), "\(plain)")
        let none = await fixture.runReconciler(["events", "deliver", "--once", "--url", receiver.url])
        #expect(none.status == 78 && none.stderr.contains("no webhook secret"), "\(none)")
        let badFile = fixture.directory.appendingPathComponent("bad-secret").path
        try "not-a-secret".write(toFile: badFile, atomically: true, encoding: .utf8)
        let bad = await Self.deliver(fixture, receiver.url, badFile)
        #expect(bad.status == 78 && bad.stderr.contains("whsec_"), "\(bad)")
        #expect(!bad.stderr.contains("not-a-secret"), "the secret's text is never shown")
        // Signed with another secret: the receiver refuses every request (401), the events stay pending.
        let otherFile = fixture.directory.appendingPathComponent("other-secret").path
        try ("whsec_" + Data(repeating: 1, count: 32).base64EncodedString()).write(
            toFile: otherFile,
            atomically: true,
            encoding: .utf8
        )
        let wrong = await Self.deliver(fixture, receiver.url, otherFile, ["--first-retry", "60"])
        #expect(wrong.status == 69, "\(wrong)")
        #expect(receiver.records("attempts.jsonl").allSatisfy { $0["status"] as? Int == 401 })
        #expect(receiver.records().isEmpty)
        #expect(try Self.status(conn) == ["pending": 12])
    }

    @Test func aDelivererKilledMidBatchLeavesEveryEventToTheNext() async throws {
        let (fixture, conn, secretFile) = try await Self.world()
        defer { conn.close() }
        // 1.5 s a request: the 12 take 18 s. The kill comes from the polling thread as soon as three have come,
        // not from this test's task, which a loaded pool may wake late.
        let receiver = try await WebhookReceiver(secret: Self.secret, mode: "slow:1.5")
        let first = try await ChildProcess(
            EndToEndFixture.reconcilerBinary,
            [
                "events", "deliver", "--url", receiver.url, "--secret-file", secretFile, "--batch-size", "4",
                "--request-timeout", "3",
            ],
            environment: fixture.environment
        )
        let reached = try await fixture.poll(limit: 30) {
            receiver.records("attempts.jsonl").count >= 3
        } then: {
            first.signal(SIGKILL)
        }
        #expect(reached, "three requests came within 30 s")
        if !reached { first.signal(SIGKILL) }
        let killed = await first.outcome()
        #expect(killed.killedBySIGKILL, "\(killed)")
        #expect(receiver.records().count < 12, "killed mid-batch")
        // The killed deliverer's leases (4 requests of at most 3 s, plus 10 s) run out; the next one sends the rest.
        try await Task.sleep(for: .seconds(23))
        try receiver.set(mode: "ok")
        let next = await Self.deliver(fixture, receiver.url, secretFile)
        #expect(next.status == 0, "\(next)")
        Self.expectComplete(receiver.records())
        #expect(try Self.status(conn) == ["delivered": 12])
    }

    @Test func exportWritesTheEventsAsJSONLinesOrCSVFromAPoint() async throws {
        let (fixture, conn, _) = try await Self.world()
        defer { conn.close() }
        let jsonl = await fixture.runReconciler(["events", "export"])
        #expect(jsonl.status == 0 && jsonl.stderr.contains("12 exported"), "\(jsonl)")
        let lines = jsonl.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(lines.count == 12)
        let ids = lines.compactMap { ($0["event_id"] as? String)?.dropFirst(4) }.compactMap { Int($0) }
        #expect(ids == ids.sorted() && ids.count == 12, "\(ids)")
        #expect((lines.first?["before"] as? [String: Any])?["state"] as? String == "active")
        // From a point: the events after the sixth, as CSV with one column per field.
        let csvFile = fixture.directory.appendingPathComponent("events.csv").path
        let csv = await fixture.runReconciler([
            "events", "export", "--format", "csv", "--after-id", String(ids[5]), "--out", csvFile,
        ])
        #expect(csv.status == 0, "\(csv)")
        let rows = try String(contentsOfFile: csvFile, encoding: .utf8).split(whereSeparator: \.isNewline)
        #expect(rows.count == 7, "a header and six events")
        #expect(rows.first?.hasPrefix("event_id,subscription_id,sequence,kind,") == true)
        #expect(rows.allSatisfy { $0.split(separator: ",", omittingEmptySubsequences: false).count == 25 })
        #expect(rows.dropFirst().first?.hasPrefix("evt_\(ids[6]),") == true)
        let none = await fixture.runReconciler(["events", "export", "--since", "2099-01-01T00:00:00Z"])
        #expect(none.status == 0 && none.stdout.isEmpty && none.stderr.contains("0 exported"), "\(none)")
        let bad = await fixture.runReconciler(["events", "export", "--format", "xml"])
        #expect(bad.status == 64, "\(bad)")
    }

    @Test func twoDeliverersAtOnceNeverSendOneEventTwice() async throws {
        let (fixture, conn, secretFile) = try await Self.world()
        defer { conn.close() }
        let receiver = try await WebhookReceiver(secret: Self.secret, mode: "slow")
        let arguments = [
            "events", "deliver", "--once", "--url", receiver.url, "--secret-file", secretFile, "--batch-size", "2",
        ]
        let deliverers = [
            try await ChildProcess(EndToEndFixture.reconcilerBinary, arguments, environment: fixture.environment),
            try await ChildProcess(EndToEndFixture.reconcilerBinary, arguments, environment: fixture.environment),
        ]
        for deliverer in deliverers {
            let outcome = await deliverer.outcome()
            #expect(outcome.status == 0, "\(outcome)")
        }
        let ids = receiver.records().compactMap { $0["id"] as? String }
        #expect(ids.count == 12 && Set(ids).count == 12, "each event sent once: \(ids)")
        Self.expectComplete(receiver.records())
    }
}
