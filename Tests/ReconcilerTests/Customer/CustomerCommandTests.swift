import Foundation
import Postgres
import TestSupport
import Testing

/// `renewal-reconciler customer` end to end (docs/customer.md): a night through the App Store Server API against the
/// simulator on loopback and a real PostgreSQL, then the customer asked by every kind of id, the order id through
/// the simulator's Look Up Order ID; no such customer, an order Apple does not know, and bad arguments.
@Suite struct CustomerCommandTests {
    static let fast = [
        "--rate", "2000", "--concurrency", "16", "--statuses-rate", "2000", "--history-rate", "2000",
        "--notifications-rate", "2000", "--notifications-lookback", "180d",
    ]

    struct Customer {
        var userId: String
        var originalTransactionId: String
        var token: String
        var orderId: String
    }

    /// A production customer with a ledger, an app account token and an order id in the simulator's export.
    static func customer(_ fixture: EndToEndFixture) throws -> Customer {
        let conn = try fixture.connect()
        defer { conn.close() }
        let rows = try conn.query(
            """
            SELECT s.user_id, s.original_transaction_id, t.transaction_id, t.app_account_token
              FROM subscriptions s JOIN subscription_transactions t USING (original_transaction_id)
             WHERE t.environment = 'Production' AND t.app_account_token IS NOT NULL ORDER BY s.id, t.transaction_id
            """
        )
        let ledger = try String(
            contentsOf: fixture.directory.appendingPathComponent("server-api/ledger.jsonl"),
            encoding: .utf8
        )
        var orders: [String: String] = [:]
        for line in ledger.split(separator: "\n") {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            for t in object?["transactions"] as? [[String: Any]] ?? [] {
                if let id = t["transaction_id"] as? String, let order = t["order_id"] as? String { orders[id] = order }
            }
        }
        for row in rows {
            guard let order = orders[try row.decode("transaction_id", as: String.self)] else { continue }
            return Customer(
                userId: try row.decode("user_id"),
                originalTransactionId: try row.decode("original_transaction_id"),
                token: try row.decode("app_account_token"),
                orderId: order
            )
        }
        throw FixtureError("no production customer with a token and an order id")
    }

    @Test func everyKindOfIdTellsTheSameStory() async throws {
        let fixture = try await EndToEndFixture(subscriptions: 80)
        _ = try await fixture.startSimulator([
            "--max-rps-statuses", "2000", "--max-rps-history", "2000", "--max-rps-notification-history", "2000",
        ])
        let env = try fixture.serverAPIEnvironment()
        let night = try await fixture.run(Self.fast, extraEnvironment: env)
        #expect([0, 2].contains(night.status), "\(night)")
        let customer = try Self.customer(fixture)
        let asks = [
            ["--user-id", customer.userId], ["--original-transaction-id", customer.originalTransactionId],
            ["--app-account-token", customer.token.uppercased()], ["--order-id", customer.orderId],
        ]
        for ask in asks {
            let outcome = await fixture.runReconciler(["customer", "--json"] + ask, extraEnvironment: env)
            #expect(outcome.status == 0, "\(ask): \(outcome)")
            let story = try #require(
                try JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [String: Any]
            )
            #expect(story["user_ids"] as? [String] == [customer.userId], "\(ask)")
            let subscriptions = story["subscriptions"] as? [[String: Any]] ?? []
            let mine = subscriptions.first {
                ($0["subscription"] as? [String: Any])?["original_transaction_id"] as? String
                    == customer.originalTransactionId
            }
            let transactions = try #require(mine?["transactions"] as? [[String: Any]], "\(ask)")
            #expect(transactions.contains { $0["price_milliunits"] is Int && $0["currency"] is String })
            #expect((mine?["history"] as? [[String: Any]])?.isEmpty == false)
            #expect(mine?["checks"] is [String: Any])
            #expect(mine?.keys.contains("events") == true)
            if ask[0] == "--order-id" {
                let order = try #require(story["order"] as? [[String: Any]])
                #expect(order.first?["original_transaction_id"] as? String == customer.originalTransactionId)
            }
            #expect(!outcome.stdout.contains("eyJ"), "no signed payload is printed")
        }
        let text = await fixture.runReconciler(["customer", "--user-id", customer.userId], extraEnvironment: env)
        #expect(text.status == 0)
        #expect(text.stdout.contains("Subscription \(customer.originalTransactionId)"), "\(text.stdout)")
        #expect(text.stdout.contains("Transactions (") && text.stdout.contains("History ("))

        // --refresh: Apple asked now through a dry-run backfill; the rows are not written.
        let conn = try fixture.connect()
        defer { conn.close() }
        let versions = "SELECT string_agg(id || ':' || version, ',' ORDER BY id) AS v FROM subscriptions"
        let versionsBefore = try conn.queryFirst(versions)?.decode("v", as: String.self)
        let refreshed = await fixture.runReconciler(
            ["customer", "--json", "--refresh", "--user-id", customer.userId] + Self.fast,
            extraEnvironment: env
        )
        #expect(refreshed.status == 0, "\(refreshed)")
        let refreshedStory = try JSONSerialization.jsonObject(with: Data(refreshed.stdout.utf8)) as? [String: Any]
        let items = refreshedStory?["refresh"] as? [[String: Any]] ?? []
        let subscriptionCount = (refreshedStory?["subscriptions"] as? [Any])?.count
        #expect(items.count == subscriptionCount && !items.isEmpty, "\(items)")
        #expect(items.contains { $0["original_transaction_id"] as? String == customer.originalTransactionId })
        #expect(items.allSatisfy { $0["status"] as? String == "done" }, "\(items)")
        #expect(try conn.queryFirst(versions)?.decode("v", as: String.self) == versionsBefore, "nothing written")
        let dryRuns = try conn.queryFirst("SELECT count(*) AS n FROM reconciliation_runs WHERE dry_run")
        #expect(try dryRuns?.decode("n", as: Int.self) == 1)
        let refreshedText = await fixture.runReconciler(
            ["customer", "--refresh", "--user-id", customer.userId] + Self.fast,
            extraEnvironment: env
        )
        #expect(refreshedText.stdout.contains("Asked Apple now (a dry run"), "\(refreshedText)")
        #expect(refreshedText.stdout.contains("\(customer.originalTransactionId): "), "\(refreshedText)")

        // Nobody: exit 1 with a clear message; an order Apple does not know: exit 1.
        let nobody = await fixture.runReconciler(["customer", "--user-id", "no-such-user"], extraEnvironment: env)
        #expect(nobody.status == 1 && nobody.stderr.contains("no such customer"), "\(nobody)")
        let unknown = await fixture.runReconciler(["customer", "--order-id", "MZZZZZZZZZ"], extraEnvironment: env)
        #expect(unknown.status == 1 && unknown.stderr.contains("Apple knows no order"), "\(unknown)")
        // Bad arguments: none, or two ids.
        #expect(await fixture.runReconciler(["customer"], extraEnvironment: env).status == 64)
        let two = await fixture.runReconciler(
            ["customer", "--user-id", "a", "--order-id", "MZZZZZZZZZ"],
            extraEnvironment: env
        )
        #expect(two.status == 64)
    }
}
