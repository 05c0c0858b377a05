import CivilTime
import Foundation
import Postgres
import ReconcilerDemo
import TestSupport
import Testing

/// After a night against the simulator, a receiver written independently of the sender (Python, `WebhookReceiver`)
/// holds exactly the events the simulator's truth implies (docs/events.md): for each subscription the night
/// verified, the transitions from the row as the night found it to the truth at the night's instant (the state's
/// change, auto-renew turned off or on, a renewal, a product change), each once, in order; nothing for the others.
/// The rules are written out here from docs/events.md's table, not taken from the sender's code.
@Suite struct EventTruthTests {
    struct Before {
        var state: String?
        var expiresAt: Date?
        var productId: String
        var autoRenew: Bool?
    }

    /// The kinds a state change is told by: one of them.
    static func stateKinds(_ from: String, _ to: String) -> Set<String> {
        EventOutboxRunTests.stateKinds(from, to)
    }

    /// The events implied by the row before the night and the truth after it: `exactly` each once, and one of each
    /// set in `oneOf`.
    static func implied(_ before: Before, _ truth: [String: Any]) -> (exactly: Set<String>, oneOf: [Set<String>]) {
        guard let s0 = before.state, let s1 = truth["state"] as? String else { return ([], []) }
        var exactly = Set<String>()
        var oneOf: [Set<String>] = []
        if s0 != s1, !stateKinds(s0, s1).isEmpty { oneOf.append(stateKinds(s0, s1)) }
        let later = (truth["expires_at"] as? String).flatMap(RFC3339.parse).map { new in
            before.expiresAt.map { new > $0 } ?? false
        }
        if s0 == "active", ["active", "grace_period"].contains(s1), later == true { exactly.insert("renewal") }
        if let product = truth["product_id"] as? String, product != before.productId {
            exactly.insert("product_change")
        }
        switch (before.autoRenew, truth["auto_renew"] as? Bool) {
        case (true, false): exactly.insert("auto_renew_off")
        case (false, true): exactly.insert("auto_renew_on")
        default: break
        }
        return (exactly, oneOf)
    }

    @Test func aReceiverHoldsExactlyTheEventsTheTruthImpliesAfterANight() async throws {
        let now0 = EndToEndFixture.defaultNow
        let start = try #require(RFC3339.parse(now0))
        let now1 = start.addingTimeInterval(86_400)
        let world = ["--mix", "retail"]
        let fixture = try await EndToEndFixture(subscriptions: 1200, anchor: now0, world: world)
        try await fixture.startSimulator()
        let conn = try fixture.connect()
        defer { conn.close() }
        #expect(try await fixture.run().status == 0)
        var before: [String: Before] = [:]
        for row in try conn.query(
            "SELECT original_transaction_id, state, expires_at, product_id, auto_renew FROM subscriptions"
        ) {
            before[try row.decode("original_transaction_id")] = Before(
                state: try row.decode("state"),
                expiresAt: try row.decode("expires_at"),
                productId: try row.decode("product_id"),
                autoRenew: try row.decode("auto_renew")
            )
        }
        // The truth at the second night's instant: the same world (its anchor), its clock a day later.
        let night1 = fixture.directory.appendingPathComponent("night1")
        try FileManager.default.createDirectory(at: night1, withIntermediateDirectories: true)
        try await SimulatorProcess.exported(
            binary: EndToEndFixture.simulatorBinary,
            seed: fixture.seed,
            subscriptions: 1200,
            now: now1,
            into: night1.path,
            extra: ["--anchor", now0] + world
        )
        let truth = Dictionary(
            try JSONLines.read(night1.appendingPathComponent("truth.jsonl")).map {
                ($0["original_transaction_id"] as? String ?? "", $0)
            },
            uniquingKeysWith: { first, _ in first }
        )
        try await fixture.startSimulator(clock: RFC3339.string(now1))
        let run = await fixture.runReconciler([
            "run", "--now", RFC3339.string(now1), "--report-dir", fixture.reportDirectory, "--rate", "2000",
        ])
        #expect(run.status == 0, "\(run)")
        let runId = try #require(
            try conn.queryFirst("SELECT max(id) AS id FROM reconciliation_runs")?.decode("id", as: Int64.self)
        )
        let verified = Set(
            try conn.query(
                """
                SELECT original_transaction_id FROM reconciliation_items
                 WHERE run_id = $1 AND outcome NOT IN ('unresolved', 'conflict', 'rejected', 'no_app')
                """,
                [runId]
            ).map { try $0.decode("original_transaction_id", as: String.self) }
        )

        let secret = "whsec_" + Data(repeating: 7, count: 32).base64EncodedString()
        let secretFile = fixture.directory.appendingPathComponent("webhook-secret").path
        try secret.write(toFile: secretFile, atomically: true, encoding: .utf8)
        let receiver = try await WebhookReceiver(secret: secret)
        let delivered = await fixture.runReconciler([
            "events", "deliver", "--once", "--url", receiver.url, "--secret-file", secretFile,
        ])
        #expect(delivered.status == 0, "\(delivered)")
        let received = Dictionary(grouping: receiver.records(), by: { $0["original_transaction_id"] as? String ?? "" })

        var compared = 0
        var withEvents = 0
        for (otid, truthRecord) in truth where truthRecord["expect"] as? String == "decision" {
            let got = (received[otid] ?? []).filter { ($0["run_id"] as? Int).map(Int64.init) == runId }
            guard verified.contains(otid), let was = before[otid] else {
                #expect(got.isEmpty, "\(otid): not verified tonight, yet \(got.count) events")
                continue
            }
            compared += 1
            let kinds = got.compactMap { $0["kind"] as? String }
            #expect(Set(kinds).count == kinds.count, "\(otid): each transition once: \(kinds)")
            let sequences = got.compactMap { $0["sequence"] as? Int }
            #expect(sequences == sequences.sorted(), "\(otid): in order")
            let (exactly, oneOf) = Self.implied(was, truthRecord)
            let rest = Set(kinds).subtracting(exactly)
            #expect(Set(kinds).isSuperset(of: exactly), "\(otid): expected \(exactly) among \(kinds)")
            #expect(rest.count == oneOf.count, "\(otid): \(kinds), implied \(exactly) and one of \(oneOf)")
            for choices in oneOf { #expect(!rest.isDisjoint(with: choices), "\(otid): one of \(choices) in \(kinds)") }
            if !kinds.isEmpty { withEvents += 1 }
        }
        #expect(compared > 100, "\(compared) subscriptions verified both nights")
        #expect(withEvents > 10, "\(withEvents) of them changed")
    }
}
