import CivilTime
import Foundation
import Postgres
import Testing

/// The outbox against a real run (docs/events.md): two nights of the same simulated world a day apart. Each change
/// the second night writes to a subscription row is that row's events, in order, their `before` the row as it was
/// and their last `after` the row as it is, each state change and auto-renew flip named by its kind; rows the night
/// left alone have none. A backfill of every row at the same instant, and a dry run a day later, write none.
@Suite struct EventOutboxRunTests {
    struct Row: Equatable {
        var state: String?
        var expiresAt: String?
        var productId: String
        var autoRenew: Bool?
    }

    static func rows(_ conn: PostgresConnection) throws -> [Int64: Row] {
        var rows: [Int64: Row] = [:]
        for row in try conn.query(
            "SELECT id, state, expires_at, product_id, auto_renew FROM subscriptions"
        ) {
            rows[try row.decode("id")] = Row(
                state: try row.decode("state"),
                expiresAt: (try row.decode("expires_at", as: Date?.self)).map { RFC3339.string($0) },
                productId: try row.decode("product_id"),
                autoRenew: try row.decode("auto_renew")
            )
        }
        return rows
    }

    struct Event {
        var subscriptionId: Int64
        var sequence: Int
        var kind: String
        var before: [String: Any]
        var after: [String: Any]
        var runId: Int64?
    }

    static func events(_ conn: PostgresConnection) throws -> [Event] {
        try conn.query(
            """
            SELECT subscription_id, sequence, kind, before::text AS before, after::text AS after, run_id
              FROM subscription_events ORDER BY subscription_id, sequence
            """
        ).map { row in
            func object(_ column: String) throws -> [String: Any] {
                let text: String = try row.decode(column)
                return try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] ?? [:]
            }
            return Event(
                subscriptionId: try row.decode("subscription_id"),
                sequence: try row.decode("sequence", as: Int.self),
                kind: try row.decode("kind"),
                before: try object("before"),
                after: try object("after"),
                runId: try row.decode("run_id")
            )
        }
    }

    /// The row as an event's snapshot shows it.
    static func row(_ snapshot: [String: Any]) -> Row {
        Row(
            state: snapshot["state"] as? String,
            expiresAt: snapshot["expires_at"] as? String,
            productId: snapshot["product_id"] as? String ?? "",
            autoRenew: snapshot["auto_renew"] as? Bool
        )
    }

    /// The kinds a state change may be told by (docs/events.md, "Kinds"), written out here.
    static func stateKinds(_ from: String, _ to: String) -> Set<String> {
        switch (from, to) {
        case (_, "revoked"): ["refund", "revocation"]
        case ("revoked", _): ["refund_reversed", "purchase"]
        case ("active", "grace_period"): ["grace_period"]
        case (_, "billing_retry"): ["billing_issue"]
        case ("grace_period", "active"), ("billing_retry", "active"): ["recovery"]
        case (_, "expired"): ["expiration"]
        case ("expired", _): ["purchase", "extension"]
        default: []
        }
    }

    @Test func eachChangeOfANightIsItsEventsOnceAndABackfillOrDryRunWritesNone() async throws {
        let now0 = EndToEndFixture.defaultNow
        let start = try #require(RFC3339.parse(now0))
        let fixture = try await EndToEndFixture(
            subscriptions: 1500,
            anchor: now0,
            seedPriorRuns: true,
            world: ["--mix", "retail"]
        )
        try await fixture.startSimulator()
        let conn = try fixture.connect()
        defer { conn.close() }
        #expect(try await fixture.run().status == 0)
        let afterNight0 = try Self.rows(conn)
        let night0Events = try Self.events(conn).count

        let now1 = RFC3339.string(start.addingTimeInterval(86_400))
        try await fixture.startSimulator(clock: now1)
        let night1 = await fixture.runReconciler([
            "run", "--now", now1, "--report-dir", fixture.reportDirectory, "--rate", "2000", "--concurrency", "32",
        ])
        #expect(night1.status == 0, "\(night1)")
        let afterNight1 = try Self.rows(conn)
        let all = try Self.events(conn)
        let run1 = try #require(
            try conn.queryFirst("SELECT max(id) AS id FROM reconciliation_runs")?.decode("id", as: Int64.self)
        )
        let tonight = Dictionary(grouping: all.filter { $0.runId == run1 }, by: \.subscriptionId)
        #expect(tonight.count > 20, "a night of 1,500 subscriptions changes some: \(tonight.count)")
        #expect(
            Set(tonight.values.joined().map(\.kind)).isSuperset(of: ["renewal", "expiration", "auto_renew_off"])
        )

        for (id, before) in afterNight0 {
            let after = try #require(afterNight1[id])
            let events = tonight[id] ?? []
            let kinds = Set(events.map(\.kind))
            guard before != after, before.state != nil else {
                #expect(kinds.subtracting(["price_increase_consent"]).isEmpty, "\(id): \(kinds), row unchanged")
                continue
            }
            if let first = events.first, let last = events.last {
                #expect(Self.row(first.before) == before, "\(id): before")
                #expect(Self.row(last.after) == after, "\(id): after")
            }
            if let from = before.state, let to = after.state, from != to {
                #expect(!kinds.isDisjoint(with: Self.stateKinds(from, to)), "\(id): \(from) -> \(to), got \(kinds)")
            }
            #expect(kinds.contains("auto_renew_off") == (before.autoRenew == true && after.autoRenew == false), "\(id)")
            #expect(kinds.contains("auto_renew_on") == (before.autoRenew == false && after.autoRenew == true), "\(id)")
        }
        for (id, events) in Dictionary(grouping: all, by: \.subscriptionId) {
            #expect(events.map(\.sequence) == Array(1...events.count), "\(id): sequences")
        }

        // A backfill of every row at the same instant finds what the night did not ask about (a row not due whose
        // auto-renew was turned off): its events say so. A second one finds nothing new: no event.
        let backfill = await fixture.runReconciler(["backfill", "--all", "--now", now1, "--rate", "2000"])
        #expect(backfill.status == 0, "\(backfill)")
        let afterBackfill = try Self.events(conn).count
        let sources = try conn.query(
            "SELECT DISTINCT source FROM subscription_events WHERE run_id = (SELECT max(id) FROM reconciliation_runs)"
        ).map { try $0.decode("source", as: String.self) }
        #expect(afterBackfill == all.count || sources == ["backfill"], "\(sources)")
        let again = await fixture.runReconciler(["backfill", "--all", "--now", now1, "--rate", "2000"])
        #expect(again.status == 0, "\(again)")
        #expect(try Self.events(conn).count == afterBackfill)
        // A dry run a day later writes nothing, events included.
        let now2 = RFC3339.string(start.addingTimeInterval(2 * 86_400))
        try await fixture.startSimulator(clock: now2)
        let dry = await fixture.runReconciler(["run", "--dry-run", "--now", now2, "--rate", "2000"])
        #expect(dry.status == 0, "\(dry)")
        #expect(try Self.events(conn).count == afterBackfill)
        #expect(all.count > night0Events)
        try await Self.customerShowsEvents(fixture, conn)
    }

    /// `customer` shows a subscription's events in order, as text and JSON (docs/customer.md).
    static func customerShowsEvents(_ fixture: EndToEndFixture, _ conn: PostgresConnection) async throws {
        let events = Dictionary(grouping: try Self.events(conn), by: \.subscriptionId)
        let (id, theirs) = try #require(events.max { ($0.value.count, $1.key) < ($1.value.count, $0.key) })
        let who = try #require(
            try conn.queryFirst("SELECT user_id, original_transaction_id FROM subscriptions WHERE id = $1", [id])
        )
        let user: String = try who.decode("user_id")
        let otid: String = try who.decode("original_transaction_id")
        let json = await fixture.runReconciler(["customer", "--json", "--user-id", user])
        #expect(json.status == 0, "\(json)")
        let story = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        let subscription = (story?["subscriptions"] as? [[String: Any]])?.first {
            ($0["subscription"] as? [String: Any])?["original_transaction_id"] as? String == otid
        }
        let shown = subscription?["events"] as? [[String: Any]] ?? []
        #expect(shown.map { $0["kind"] as? String } == theirs.map(\.kind), "\(shown)")
        let text = await fixture.runReconciler(["customer", "--user-id", user])
        #expect(text.stdout.contains("Events (\(theirs.count)):"), "\(text.stdout)")
        #expect(text.stdout.contains("#1 ") && text.stdout.contains(theirs[0].kind))
    }
}
