import CivilTime
import Foundation
import Postgres
import Reconciler
import Testing

/// `renewal-reconciler import` against a real PostgreSQL: all-or-nothing, --skip-invalid, upsert,
/// expiry never moved backwards, CSV and JSONL, very large receipts.
@Suite struct ImportDBTests {
    static func jsonLine(
        _ otid: String,
        receipt: String = "QUJDRA==",
        expires: String = "2026-12-01T00:00:00Z",
        user: String = "u1"
    ) -> String {
        #"{"user_id":"\#(user)","product_id":"com.example.renewals.pro.monthly","original_transaction_id":"\#(otid)","latest_receipt":"\#(receipt)","expires_at":"\#(expires)"}"#
    }

    func write(_ world: EndToEndFixture, _ name: String, _ lines: [String]) throws -> String {
        let path = world.directory.appendingPathComponent(name).path
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func oneBadLineLoadsNothingAndNamesEveryBadLine() async throws {
        let world = try await EndToEndFixture(subscriptions: 0)
        let file = try write(
            world,
            "bad.jsonl",
            [
                Self.jsonLine("1001"),
                Self.jsonLine("1002", expires: "2026-13-01T00:00:00Z"),
                Self.jsonLine("1003"),
                #"{"user_id":"u4","product_id":"p","original_transaction_id":"1004"}"#,
                Self.jsonLine("1005", receipt: "not base64!"),
            ]
        )
        let outcome = await world.runReconciler(["import", "--file", file])
        #expect(outcome.status == 64, "\(outcome)")
        for line in [2, 4, 5] { #expect(outcome.stderr.contains("line \(line):"), "\(outcome.stderr)") }
        for line in [1, 3] { #expect(!outcome.stderr.contains("line \(line):"), "\(outcome.stderr)") }
        #expect(outcome.stderr.contains("nothing was loaded"))
        let conn = try world.connect()
        defer { conn.close() }
        #expect(try conn.count("SELECT count(*) AS n FROM subscriptions") == 0)

        let skipping = await world.runReconciler(["import", "--file", file, "--skip-invalid"])
        #expect(skipping.status == 2, "\(skipping)")
        #expect(skipping.stdout.contains("2 inserted"), "\(skipping.stdout)")
        #expect(
            try conn.query("SELECT original_transaction_id FROM subscriptions ORDER BY 1").map {
                try $0.decode("original_transaction_id", as: String.self)
            } == ["1001", "1003"]
        )
    }

    @Test func anAppAccountTokenIsStoredAndKeptWhenALaterFileLeavesItOut() async throws {
        let world = try await EndToEndFixture(subscriptions: 0)
        let conn = try world.connect()
        defer { conn.close() }
        let token = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
        let withToken = Self.jsonLine("2001").replacingOccurrences(
            of: "}",
            with: #","app_account_token":"\#(token.uppercased())"}"#
        )
        let first = await world.runReconciler(["import", "--file", try write(world, "a.jsonl", [withToken])])
        #expect(first.status == 0, "\(first)")
        let later = await world.runReconciler([
            "import", "--file", try write(world, "b.jsonl", [Self.jsonLine("2001")]),
        ])
        #expect(later.status == 0, "\(later)")
        let stored = try conn.queryFirst(
            "SELECT app_account_token FROM subscriptions WHERE original_transaction_id = '2001'"
        )
        #expect(try stored?.decode("app_account_token", as: String?.self) == token)
    }

    @Test func upsertByOriginalTransactionIdNeverMovesExpiryBackwards() async throws {
        let world = try await EndToEndFixture(subscriptions: 0)
        let conn = try world.connect()
        defer { conn.close() }
        let first = try write(world, "a.jsonl", [Self.jsonLine("2001", receipt: "QUFBQQ=="), Self.jsonLine("2002")])
        #expect(await world.runReconciler(["import", "--file", first]).status == 0)

        // Newer expiry: receipt and expiry replaced, same row.
        let newer = try write(
            world,
            "b.jsonl",
            [Self.jsonLine("2001", receipt: "QkJCQg==", expires: "2027-01-01T00:00:00Z", user: "u9")]
        )
        let updated = await world.runReconciler(["import", "--file", newer])
        #expect(updated.status == 0, "\(updated)")
        #expect(updated.stdout.contains("1 updated"), "\(updated.stdout)")
        #expect(try conn.count("SELECT count(*) AS n FROM subscriptions") == 2)
        var row = try #require(
            try conn.queryFirst(
                "SELECT latest_receipt, expires_at FROM subscriptions WHERE original_transaction_id = '2001'"
            )
        )
        #expect(try row.decode("latest_receipt", as: String.self) == "QkJCQg==")
        #expect(try row.decode("expires_at", as: Date?.self) == RFC3339.parse("2027-01-01T00:00:00Z"))

        // Older expiry in the file: the stored (newer) expiry and receipt stay.
        let older = try write(
            world,
            "c.jsonl",
            [Self.jsonLine("2001", receipt: "Q0NDQw==", expires: "2026-06-01T00:00:00Z")]
        )
        let kept = await world.runReconciler(["import", "--file", older])
        #expect(kept.status == 0, "\(kept)")
        #expect(kept.stdout.contains("1 kept"), "\(kept.stdout)")
        row = try #require(
            try conn.queryFirst(
                "SELECT latest_receipt, expires_at FROM subscriptions WHERE original_transaction_id = '2001'"
            )
        )
        #expect(try row.decode("expires_at", as: Date?.self) == RFC3339.parse("2027-01-01T00:00:00Z"))
        #expect(try row.decode("latest_receipt", as: String.self) == "QkJCQg==")
        #expect(try conn.count("SELECT count(*) AS n FROM subscriptions") == 2)
    }

    @Test func csvWithHeadersInAnyOrderAndAThreeHundredThousandCharacterReceipt() async throws {
        let world = try await EndToEndFixture(subscriptions: 0)
        let conn = try world.connect()
        defer { conn.close() }
        let big = String(repeating: "QUJD", count: 75_000)  // 300,000 base64 characters
        #expect(big.utf8.count == 300_000)
        let csv = try write(
            world,
            "subs.csv",
            [
                "expires_at,original_transaction_id,latest_receipt,product_id,user_id,environment",
                "2026-12-01T00:00:00Z,3001,\(big),com.example.renewals.pro.monthly,u1,Production",
                "2026-12-02T00:00:00+01:00,3002,QUJDRA==,com.example.renewals.pro.yearly,\"u,2\",Sandbox",
            ]
        )
        let outcome = await world.runReconciler(["import", "--file", csv])
        #expect(outcome.status == 0, "\(outcome)")
        let length = try conn.count(
            "SELECT length(latest_receipt) AS n FROM subscriptions WHERE original_transaction_id = '3001'"
        )
        #expect(length == 300_000)
        let row = try #require(
            try conn.queryFirst(
                "SELECT user_id, environment, expires_at FROM subscriptions WHERE original_transaction_id = '3002'"
            )
        )
        #expect(try row.decode("user_id", as: String.self) == "u,2")
        #expect(try row.decode("environment", as: String?.self) == "Sandbox")
        #expect(try row.decode("expires_at", as: Date?.self) == RFC3339.parse("2026-12-01T23:00:00Z"))

        let jsonl = try write(world, "more.jsonl", [Self.jsonLine("3003", receipt: big)])
        #expect(await world.runReconciler(["import", "--file", jsonl]).status == 0)
        #expect(try conn.count("SELECT count(*) AS n FROM subscriptions WHERE length(latest_receipt) = 300000") == 2)
    }
}
