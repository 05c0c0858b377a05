import CivilTime
import Foundation
import Postgres
import TestSupport
import Testing

@testable import Reconciler

/// Trend snapshots across nights (docs/reports.md, "Trends across nights") on a real PostgreSQL: a hand-made world of six
/// subscriptions over three nights (ledger prices in USD and JPY, a catalog-priced weekly product, an unpriced
/// product), recorded night by night as the runs complete; then `--rebuild`, trends.csv and trends.html.
@Suite struct TrendSnapshotTests {
    static func at(_ text: String) -> Date { RFC3339.parse(text) ?? .distantPast }

    static let night1 = "2024-05-01T03:00:00Z"
    static let night2 = "2024-05-02T03:00:00Z"
    static let night3 = "2024-05-03T03:00:00Z"

    final class World {
        let database: TestDatabase?
        let connection: PostgresConnection

        /// A fresh database with every migration.
        convenience init() throws {
            let database = try TestDatabase.make()
            let connection = try database.connect()
            let sqlDirectory = EndToEndFixture.packageRoot.appendingPathComponent("sql").path
            for file in try MigrationDirectory(path: sqlDirectory).files() {
                try connection.executeScript(try String(contentsOfFile: file.path, encoding: .utf8))
            }
            try self.init(database: database, connection: connection)
        }

        /// The world in an already migrated database (`database` nil: the caller drops it).
        init(database: TestDatabase?, connection: PostgresConnection) throws {
            self.database = database
            self.connection = connection
            try connection.execute(
                "INSERT INTO products (product_id, currency, price, period) VALUES ('basic.weekly', 'USD', 2.99, 'P1W')"
            )
            let subscriptions: [(Int64, String?, String)] = [
                (1, "com.app", "pro.monthly"), (2, "com.app", "pro.yearly"), (3, "com.app", "pro.monthly"),
                (4, nil, "basic.weekly"), (5, "com.app", "legacy.product"), (6, "com.app", "pro.monthly"),
            ]
            for (id, bundle, product) in subscriptions {
                try connection.execute(
                    """
                    INSERT INTO subscriptions (id, user_id, bundle_id, product_id, original_transaction_id,
                        latest_receipt, state)
                    VALUES ($1, 'user-' || $1::text, $2, $3, 'otid-' || $1::text, 'receipt', 'active')
                    """,
                    [id, bundle, product]
                )
            }
        }

        func close() {
            connection.close()
            database?.drop()
        }

        func run(_ id: Int64, _ asOf: String, status: String = "completed", dryRun: Bool = false) throws {
            try connection.execute(
                """
                INSERT INTO reconciliation_runs (id, mode, dry_run, status, as_of, started_at, finished_at, exit_code)
                VALUES ($1, 'nightly', $2, $3, $4, $4, $4::timestamptz + interval '5 minutes', 0)
                """,
                [id, dryRun, status, TrendSnapshotTests.at(asOf)]
            )
        }

        func item(
            _ run: Int64,
            _ subscription: Int64,
            _ outcome: String,
            _ state: String,
            autoRenew: Bool = true
        ) throws {
            try connection.execute(
                """
                INSERT INTO reconciliation_items (run_id, subscription_id, original_transaction_id, status, outcome,
                    new_state, product_id, auto_renew)
                SELECT $1, id, original_transaction_id, 'done', $3, $4, product_id, $5 FROM subscriptions WHERE id = $2
                """,
                [run, subscription, outcome, state, autoRenew]
            )
        }

        func transaction(
            _ id: String,
            subscription: Int64,
            kind: String,
            purchased: String,
            days: Int,
            price: Int64?,
            currency: String?,
            trial: Bool = false,
            revoked: String? = nil
        ) throws {
            try connection.execute(
                """
                INSERT INTO subscription_transactions (transaction_id, original_transaction_id, product_id, kind,
                    purchase_date, expires_date, is_trial, price_milliunits, currency, revocation_date,
                    cancellation_date)
                SELECT $1, original_transaction_id, product_id, $3, $4, $4::timestamptz + make_interval(days => $5::int),
                       $6, $7, $8, $9, $9
                  FROM subscriptions WHERE id = $2
                """,
                [
                    id, subscription, kind, TrendSnapshotTests.at(purchased), days, trial, price, currency,
                    revoked.map(TrendSnapshotTests.at),
                ]
            )
        }

        func refund(_ id: String, _ revoked: String) throws {
            try connection.execute(
                "UPDATE subscription_transactions SET revocation_date = $2, cancellation_date = $2 WHERE transaction_id = $1",
                [id, TrendSnapshotTests.at(revoked)]
            )
        }

        /// Night 1: five active subscriptions and one in a free trial started that night.
        func night1() throws {
            try run(1, TrendSnapshotTests.night1)
            try transaction(
                "t1a",
                subscription: 1,
                kind: "initial",
                purchased: "2024-04-15T10:00:00Z",
                days: 30,
                price: 9990,
                currency: "USD"
            )
            try transaction(
                "t2a",
                subscription: 2,
                kind: "initial",
                purchased: "2024-03-01T10:00:00Z",
                days: 365,
                price: 12_000_000,
                currency: "JPY"
            )
            try transaction(
                "t3a",
                subscription: 3,
                kind: "initial",
                purchased: "2024-05-01T01:00:00Z",
                days: 7,
                price: 0,
                currency: "USD",
                trial: true
            )
            try transaction(
                "t4a",
                subscription: 4,
                kind: "initial",
                purchased: "2024-04-28T10:00:00Z",
                days: 7,
                price: nil,
                currency: nil
            )
            try transaction(
                "t5a",
                subscription: 5,
                kind: "initial",
                purchased: "2024-04-10T10:00:00Z",
                days: 30,
                price: nil,
                currency: nil
            )
            try transaction(
                "t6a",
                subscription: 6,
                kind: "initial",
                purchased: "2024-04-20T10:00:00Z",
                days: 30,
                price: 9990,
                currency: "USD"
            )
            for subscription in 1...6 { try item(1, Int64(subscription), "unchanged", "active") }
        }

        /// Night 2: subscription 6 refunded (revoked), 4 in billing retry; the rest unchanged (3 not checked).
        func night2() throws {
            try run(2, TrendSnapshotTests.night2)
            try refund("t6a", "2024-05-01T12:00:00Z")
            try item(2, 1, "unchanged", "active")
            try item(2, 2, "unchanged", "active")
            try item(2, 4, "lapsed", "billing_retry")
            try item(2, 5, "unchanged", "active")
            try item(2, 6, "revoked", "revoked", autoRenew: false)
        }

        /// Night 3: 1 renews, 3 converts from its trial, 6 buys again, 2 expires, 4 recovers; a dry run after it.
        func night3() throws {
            try run(3, TrendSnapshotTests.night3)
            try transaction(
                "t1b",
                subscription: 1,
                kind: "renewal",
                purchased: "2024-05-02T10:00:00Z",
                days: 30,
                price: 9990,
                currency: "USD"
            )
            try transaction(
                "t3b",
                subscription: 3,
                kind: "renewal",
                purchased: "2024-05-02T20:00:00Z",
                days: 30,
                price: 9990,
                currency: "USD"
            )
            try transaction(
                "t6b",
                subscription: 6,
                kind: "renewal",
                purchased: "2024-05-02T15:00:00Z",
                days: 30,
                price: 9990,
                currency: "USD"
            )
            try transaction(
                "t4b",
                subscription: 4,
                kind: "renewal",
                purchased: "2024-05-02T12:00:00Z",
                days: 7,
                price: nil,
                currency: nil
            )
            try item(3, 1, "renewed", "active")
            try item(3, 2, "lapsed", "expired", autoRenew: false)
            try item(3, 3, "renewed", "active")
            try item(3, 4, "recovered", "active")
            try item(3, 5, "unchanged", "active")
            try item(3, 6, "renewed", "active")
            // A dry run of the same day later: never a snapshot, never a state.
            try run(4, "2024-05-03T05:00:00Z", dryRun: true)
            try item(4, 1, "lapsed", "expired", autoRenew: false)
        }

        func rows(_ date: String) throws -> [String: TrendRow] {
            let rows = try connection.query(
                "SELECT \(TrendRow.selectList) FROM trend_snapshots WHERE snapshot_date = $1::date",
                [date]
            ).map(TrendRow.init(row:))
            return Dictionary(uniqueKeysWithValues: rows.map { ("\($0.bundleId)/\($0.productId)/\($0.currency)", $0) })
        }

        func allRows() throws -> [TrendRow] {
            try connection.query(
                "SELECT \(TrendRow.selectList) FROM trend_snapshots ORDER BY 1, bundle_id, product_id, currency"
            ).map(TrendRow.init(row:))
        }

        /// The three nights, each snapshot recorded as its run completes.
        func recordThreeNights() throws {
            let writer = TrendSnapshotWriter(connection: connection)
            try night1()
            try writer.record(runId: 1)
            try night2()
            try writer.record(runId: 2)
            try night3()
            try writer.record(runId: 3)
            #expect(try writer.record(runId: 4) == nil)
        }
    }

    @Test func eachNightRecordsCountsAndMRRPerAppProductAndCurrency() throws {
        let world = try World()
        defer { world.close() }
        try world.recordThreeNights()

        let day1 = try world.rows("2024-05-01")
        #expect(
            day1.keys.sorted() == [
                "app/basic.weekly/USD", "com.app/legacy.product/", "com.app/pro.monthly/USD", "com.app/pro.yearly/JPY",
            ]
        )
        let monthly1 = try #require(day1["com.app/pro.monthly/USD"])
        #expect(monthly1.active == 3)
        #expect(monthly1.inTrial == 1)
        #expect(monthly1.newSubscriptions == 1)
        #expect(monthly1.mrrSubscriptions == 2)
        #expect(monthly1.mrr == 19980)
        #expect(monthly1.mrrNew == 19980)
        #expect(monthly1.mrrSource == "ledger")
        #expect(monthly1.runId == 1)
        // 12,000 yen a year: 1,000 yen a month.
        #expect(day1["com.app/pro.yearly/JPY"]?.mrr == 1_000_000)
        // The catalog's 2.99 a week: 2.99 x 52 / 12 = 12.9566... rounded to the cent.
        let weekly1 = try #require(day1["app/basic.weekly/USD"])
        #expect(weekly1.mrr == 12960)
        #expect(weekly1.mrrSource == "catalog")
        // No price anywhere: counted, never an amount.
        let unpriced = try #require(day1["com.app/legacy.product/"])
        #expect(unpriced.active == 1)
        #expect(unpriced.mrr == nil)
        #expect(unpriced.mrrNew == nil)
        #expect(unpriced.mrrSource == "")

        let day2 = try world.rows("2024-05-02")
        let monthly2 = try #require(day2["com.app/pro.monthly/USD"])
        #expect(monthly2.active == 2)
        #expect(monthly2.refunded == 1)
        #expect(monthly2.mrr == 9990)
        #expect(monthly2.mrrChurn == 9990)
        #expect(monthly2.mrrNew == 0)
        let weekly2 = try #require(day2["app/basic.weekly/USD"])
        #expect(weekly2.billingRetry == 1)
        #expect(weekly2.lapsed == 1)
        #expect(weekly2.mrr == 0)
        #expect(weekly2.mrrChurn == 12960)
        #expect(day2["com.app/pro.yearly/JPY"]?.mrr == 1_000_000)
        #expect(day2["com.app/pro.yearly/JPY"]?.mrrNew == 0)

        let day3 = try world.rows("2024-05-03")
        let monthly3 = try #require(day3["com.app/pro.monthly/USD"])
        #expect(monthly3.active == 3)
        #expect(monthly3.inTrial == 0)
        #expect(monthly3.renewed == 3)
        #expect(monthly3.reactivated == 1)
        #expect(monthly3.trialConversions == 1)
        #expect(monthly3.mrr == 29970)
        #expect(monthly3.mrrNew == 19980)
        #expect(monthly3.runId == 3)
        let yearly3 = try #require(day3["com.app/pro.yearly/JPY"])
        #expect(yearly3.active == 0)
        #expect(yearly3.churned == 1)
        #expect(yearly3.mrr == 0)
        #expect(yearly3.mrrChurn == 1_000_000)
        #expect(day3["app/basic.weekly/USD"]?.active == 1)
        #expect(day3["app/basic.weekly/USD"]?.mrrNew == 12960)

        // A second completed run the same day replaces the day's rows (idempotent).
        try world.run(5, "2024-05-03T09:00:00Z")
        let replaced = try #require(try TrendSnapshotWriter(connection: world.connection).record(runId: 5))
        #expect(replaced.runId == 5)
        let again = try world.rows("2024-05-03")
        #expect(again.count == day3.count)
        #expect(again["com.app/pro.monthly/USD"]?.runId == 5)
        #expect(again["com.app/pro.monthly/USD"]?.mrr == 29970)
    }

    /// MRR is summed exactly and rounded once per row (docs/reports.md, "Trends across nights"): six yearly 79.99 are
    /// 6 x 79.99 / 12 = 39.995 a month, 40.00 rounded half away from zero (a factor 1 / 12 cut to 20 places summed
    /// 39.99499... and rounded to 39.99).
    @Test func mrrOfSixYearlySubscriptionsIsRoundedOnceFromItsExactSum() throws {
        let world = try World()
        defer { world.close() }
        try world.connection.execute("UPDATE subscriptions SET product_id = 'pro.yearly', bundle_id = 'com.app'")
        try world.run(1, Self.night1)
        for id in Int64(1)...6 {
            try world.transaction(
                "y\(id)",
                subscription: id,
                kind: "initial",
                purchased: "2024-04-20T10:00:00Z",
                days: 365,
                price: 79990,
                currency: "USD"
            )
            try world.item(1, id, "renewed", "active")
        }
        try TrendSnapshotWriter(connection: world.connection).record(runId: 1)
        let row = try #require(try world.rows("2024-05-01")["com.app/pro.yearly/USD"])
        #expect(row.mrrSubscriptions == 6)
        #expect(row.mrr == 40000)
        #expect(row.mrrNew == 40000)
    }

    /// MRR is what a subscription renews at: the renewal info's price and currency where the run kept one (a price
    /// increase, a pending downgrade to another period), else its newest transaction's (docs/reports.md, "Trends
    /// across nights").
    @Test func mrrIsTheRenewalInfosPriceWhereTheItemKeptOne() throws {
        let world = try World()
        defer { world.close() }
        try world.connection.execute("UPDATE subscriptions SET product_id = 'pro.yearly', bundle_id = 'com.app'")
        try world.connection.execute(
            """
            INSERT INTO products (product_id, currency, price, period) VALUES
                ('pro.yearly', 'USD', 79.99, 'P1Y'), ('pro.monthly', 'USD', 9.99, 'P1M')
            """
        )
        try world.run(1, Self.night1)
        for id in Int64(1)...3 {
            try world.transaction(
                "y\(id)",
                subscription: id,
                kind: "initial",
                purchased: "2024-04-20T10:00:00Z",
                days: 365,
                price: 79990,
                currency: "USD"
            )
            try world.item(1, id, "renewed", "active")
        }
        // 1: renews at a raised yearly price; 2: renews as the monthly product; 3: no renewal price (ledger).
        for (id, price, product) in [(Int64(1), Int64(95990), "pro.yearly"), (2, 9990, "pro.monthly")] {
            try world.connection.execute(
                """
                UPDATE reconciliation_items SET renewal_price_milliunits = $2, renewal_currency = 'USD',
                       auto_renew_product_id = $3 WHERE subscription_id = $1
                """,
                [id, price, product]
            )
        }
        try TrendSnapshotWriter(connection: world.connection).record(runId: 1)
        let row = try #require(try world.rows("2024-05-01")["com.app/pro.yearly/USD"])
        #expect(row.mrrSubscriptions == 3)
        // 95.99 / 12 + 9.99 + 79.99 / 12 = 7.999166... + 9.99 + 6.665833... = 24.655 → 24.66 (rounded once).
        #expect(row.mrr == 24660)
        #expect(row.mrrSource == "renewal+ledger")
    }

    /// verifyReceipt has no price: a product the catalog lists in several currencies is valued in the subscription's
    /// own currency (what the app stored); without one it stays unpriced, never counted in a guessed currency.
    @Test func aCatalogInSeveralCurrenciesPricesEachSubscriptionInItsOwnCurrency() throws {
        let world = try World()
        defer { world.close() }
        try world.connection.execute("UPDATE subscriptions SET product_id = 'pro.monthly', bundle_id = 'com.app'")
        try world.connection.execute(
            """
            INSERT INTO products (product_id, currency, price, period) VALUES
                ('pro.monthly', 'USD', 9.99, 'P1M'), ('pro.monthly', 'EUR', 10.99, 'P1M'),
                ('pro.monthly', 'JPY', 1500, 'P1M')
            """
        )
        try world.connection.execute("UPDATE subscriptions SET currency = 'EUR' WHERE id IN (1, 2)")
        try world.connection.execute("UPDATE subscriptions SET currency = 'JPY' WHERE id = 3")
        try world.run(1, Self.night1)
        for id in Int64(1)...4 {
            try world.transaction(
                "m\(id)",
                subscription: id,
                kind: "initial",
                purchased: "2024-04-20T10:00:00Z",
                days: 30,
                price: nil,
                currency: nil
            )
            try world.item(1, id, "renewed", "active")
        }
        try TrendSnapshotWriter(connection: world.connection).record(runId: 1)
        let rows = try world.rows("2024-05-01")
        let euro = try #require(rows["com.app/pro.monthly/EUR"])
        #expect(euro.mrrSubscriptions == 2 && euro.mrr == 21980 && euro.mrrSource == "catalog")
        let yen = try #require(rows["com.app/pro.monthly/JPY"])
        #expect(yen.mrrSubscriptions == 1 && yen.mrr == 1_500_000)
        let unpriced = try #require(rows["com.app/pro.monthly/"])
        #expect(unpriced.active == 1 && unpriced.mrr == nil)
        #expect(rows["com.app/pro.monthly/USD"] == nil)
    }

    @Test func rebuildEqualsWhatTheNightsRecorded() throws {
        let world = try World()
        defer { world.close() }
        try world.recordThreeNights()
        let recorded = try world.allRows()
        #expect(recorded.count == 12)

        try world.connection.execute("DELETE FROM trend_snapshots")
        let writer = TrendSnapshotWriter(connection: world.connection)
        let range = try #require(try writer.range(days: 5))
        #expect(range.from == "2024-04-29" && range.to == "2024-05-03")
        let days = try writer.rebuild(from: range.from, to: range.to)
        #expect(days.map(\.date) == ["2024-05-01", "2024-05-02", "2024-05-03"])
        let rebuilt = try world.allRows()
        #expect(rebuilt.allSatisfy { $0.recordedBy == "rebuild" })
        let asRecorded = rebuilt.map { row in
            var row = row
            row.recordedBy = "run"
            return row
        }
        #expect(asRecorded == recorded)
    }

    @Test func theReportCommandRebuildsTheDaysAndWritesTheTrendsFiles() async throws {
        let fixture = try await EndToEndFixture(subscriptions: 0)
        let world = try World(database: nil, connection: try fixture.connect())
        defer { world.close() }
        try world.recordThreeNights()
        let recorded = try world.allRows()
        try world.connection.execute("DELETE FROM trend_snapshots")
        let out = fixture.reportDirectory + "/trends-out"

        let written = await fixture.runReconciler(["report", "--trends", "--rebuild", "--days", "3", "--out", out])
        #expect(written.status == 0, "\(written)")
        #expect(written.stdout.contains("\(out)/trends.html"), "\(written)")
        #expect(written.stderr.contains("rebuilt 3 day(s) from 2024-05-01 to 2024-05-03"), "\(written)")
        #expect(try world.allRows().map(\.recordedBy) == Array(repeating: "rebuild", count: recorded.count))
        let csv = try String(contentsOfFile: out + "/trends.csv", encoding: .utf8)
        #expect(csv.split(separator: "\r\n").count == 1 + recorded.count)

        let lastDay = await fixture.runReconciler(["report", "--trends", "--days", "1", "--out", out])
        #expect(lastDay.status == 0, "\(lastDay)")
        let oneDay = try String(contentsOfFile: out + "/trends.csv", encoding: .utf8)
        #expect(oneDay.split(separator: "\r\n").dropFirst().allSatisfy { $0.hasPrefix("2024-05-03,") })

        let both = await fixture.runReconciler(["report", "3", "--trends"])
        #expect(both.status == 64, "\(both)")
        #expect(both.stderr.contains("--trends takes no RUN_ID"), "\(both)")
    }

    @Test func trendsFilesHaveOneRowPerDayProductAndCurrencyAndAPageWithoutScripts() throws {
        let world = try World()
        defer { world.close() }
        try world.recordThreeNights()
        let directory = try ReportTempDirectory()
        let written = try TrendsReport(connection: world.connection).write(directory: directory.path, days: 90)
        #expect(written == 12)

        let csv = try String(contentsOfFile: "\(directory.path)/trends.csv", encoding: .utf8)
        let lines = csv.split(separator: "\r\n").map(String.init)
        #expect(lines.first == TrendsCSV.columns.joined(separator: ","))
        #expect(lines.first?.hasPrefix("date,") == true)
        #expect(TrendsCSV.columns.contains("mrr"))
        let body = lines.dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        #expect(body.count == 12)
        let keys = body.map { "\($0[0])/\($0[1])/\($0[2])/\($0[3])" }
        #expect(Set(keys).count == keys.count)
        let mrr = try #require(TrendsCSV.columns.firstIndex(of: "mrr"))
        let yen = try #require(body.first { $0[0] == "2024-05-01" && $0[3] == "JPY" })
        #expect(yen[mrr] == "1000")
        let dollars = try #require(body.first { $0[0] == "2024-05-03" && $0[2] == "pro.monthly" })
        #expect(dollars[mrr] == "29.97")
        let unpriced = try #require(body.first { $0[0] == "2024-05-01" && $0[2] == "legacy.product" })
        #expect(unpriced[3] == "" && unpriced[mrr] == "")

        let html = try String(contentsOfFile: "\(directory.path)/trends.html", encoding: .utf8)
        for id in TrendsHTML.chartIds + ["chart-trend-mrr-USD", "chart-trend-mrr-JPY"] {
            #expect(html.contains("<svg id=\"\(id)\""), "\(id)")
        }
        #expect(html.contains("<polyline"))
        #expect(!html.lowercased().contains("<script"))
        #expect(!html.contains("src=\"http") && !html.contains("href=\"http"))
        #expect(html.contains("unpriced"))
        // Replaced in place, no temporary file left behind.
        try TrendsReport(connection: world.connection).write(directory: directory.path, days: 1)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(names == ["trends.csv", "trends.html"])
    }

    @Test func aHostileProductIdStaysTextInTheCSVAndEscapedInThePage() throws {
        let world = try World()
        defer { world.close() }
        let hostile = "=HYPERLINK(\"http://x\",\"y\")"
        try world.connection.execute("UPDATE subscriptions SET product_id = $1 WHERE id = 1", [hostile])
        try world.night1()
        try TrendSnapshotWriter(connection: world.connection).record(runId: 1)
        let directory = try ReportTempDirectory()
        try TrendsReport(connection: world.connection).write(directory: directory.path)
        let csv = try String(contentsOfFile: "\(directory.path)/trends.csv", encoding: .utf8)
        #expect(csv.contains("\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\""))
        let html = try String(contentsOfFile: "\(directory.path)/trends.html", encoding: .utf8)
        #expect(html.contains("=HYPERLINK(&quot;http://x&quot;"))
        #expect(!html.contains(hostile))
    }

    @Test func theSnapshotStatementIsOnePlanWithoutAPerSubscriptionLoopOverTheItems() throws {
        let world = try World()
        defer { world.close() }
        try world.night1()
        // Planned as a night plans it: in the writer's settings, on statistics from before the run's rows (none
        // here: the tables were never analysed), where PostgreSQL would otherwise join row by row.
        try world.connection.transaction { db in
            try db.execute(TrendSnapshotWriter.planSettings)
            try db.execute("PREPARE trend_snapshot AS \(TrendSnapshotSQL.insert(.history))")
            let plan = try db.query(
                """
                EXPLAIN EXECUTE trend_snapshot('2024-05-01', '2024-05-01T03:00:00Z', '2024-05-01T00:00:00Z', 1,
                                               '{"JPY":0}', 'run')
                """
            ).map { try $0.decode("QUERY PLAN", as: String.self) }.joined(separator: "\n")
            try db.execute("DEALLOCATE trend_snapshot")
            #expect(plan.contains("Insert on trend_snapshots"))
            // The one nested loop left is the runs against the statement's two sides (now and the previous as-of):
            // a range condition over two rows; items and ledger are hashed or sorted, never probed row by row.
            #expect(plan.components(separatedBy: "Nested Loop").count - 1 == 1, "\(plan)")
            #expect(plan.contains("Join Filter: (r.as_of <= \"*VALUES*\".column2)"), "\(plan)")
            Self.checkOnePass(plan)
        }
    }

    static func checkOnePass(_ plan: String) {
        // One pass over the items (no probe of reconciliation_items per subscription) and one subplan: the
        // previous transaction of a renewal in the window.
        #expect(plan.components(separatedBy: "on reconciliation_items").count - 1 == 1)
        #expect(plan.components(separatedBy: "SubPlan").count - 1 == 1)
    }
}
