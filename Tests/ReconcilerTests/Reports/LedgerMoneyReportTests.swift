import Foundation
import Postgres
import Reconciler
import TestSupport
import Testing

/// Money per currency from ledger prices (App Store Server API rows) and the notifications section, on a
/// real PostgreSQL: run 42 of `ReportSampleData` (verifyReceipt rows priced by the catalog) plus priced
/// rows in USD and JPY with a full and prorated refunds, and notifications read by the run.
@Suite struct LedgerMoneyReportTests {
    /// Inserts one priced ledger row (migration 004 columns).
    static func insertPriced(
        _ connection: PostgresConnection,
        id: String,
        product: String,
        kind: String,
        price: Int64,
        currency: String,
        firstSeen: Int64,
        refundSeen: Int64? = nil,
        revocationType: String? = nil,
        percentage: Int64? = nil,
        trial: Bool = false
    ) throws {
        try connection.execute(
            """
            INSERT INTO subscription_transactions (transaction_id, original_transaction_id, product_id, kind,
                purchase_date, expires_date, is_trial, first_seen_run_id, refund_seen_run_id, price_milliunits,
                currency, storefront, revocation_date, revocation_type, revocation_percentage, signed_transaction)
            VALUES ($1, $1 || '-o', $2, $3, $4, $5, $6, $7, $8, $9, $10, 'USA', $11, $12, $13, 'eyJ.signed.jws')
            """,
            [
                // Bought in run 42's period (after run 41's as-of, three days earlier) when first seen by run 42;
                // before it when first seen by run 41.
                id, product, kind, ReportSampleData.date(firstSeen == 42 ? -2 : -5), ReportSampleData.date(28), trial,
                firstSeen, refundSeen,
                price, currency, refundSeen == nil ? nil : ReportSampleData.date(-1), revocationType, percentage,
            ]
        )
    }

    /// The sample database plus the priced rows and notifications of run 42 (and one of run 41).
    static func prepare() throws -> (TestDatabase, PostgresConnection) {
        let (database, connection) = try ReportDatabaseTests.prepare()
        // USD: a renewal (9.99), a full refund of an older 9.99, a 49.99 yearly first seen and refunded 45%
        // in this run (22.4955 -> 22.50), a free trial (price 0: no money).
        try insertPriced(
            connection,
            id: "S1",
            product: "pro.monthly",
            kind: "renewal",
            price: 9990,
            currency: "USD",
            firstSeen: 42
        )
        try insertPriced(
            connection,
            id: "S2",
            product: "pro.monthly",
            kind: "refund",
            price: 9990,
            currency: "USD",
            firstSeen: 41,
            refundSeen: 42,
            revocationType: "REFUND_FULL",
            percentage: 100000
        )
        try insertPriced(
            connection,
            id: "S3",
            product: "pro.yearly",
            kind: "refund",
            price: 49990,
            currency: "USD",
            firstSeen: 42,
            refundSeen: 42,
            revocationType: "REFUND_PRORATED",
            percentage: 45000
        )
        try insertPriced(
            connection,
            id: "S4",
            product: "pro.monthly",
            kind: "initial",
            price: 0,
            currency: "USD",
            firstSeen: 42,
            trial: true
        )
        // JPY: a 1,500 yen renewal, and an older 1,500 yen refunded at 33.333% (499.995 yen -> 500 yen).
        try insertPriced(
            connection,
            id: "S5",
            product: "pro.monthly",
            kind: "renewal",
            price: 1_500_000,
            currency: "JPY",
            firstSeen: 42
        )
        try insertPriced(
            connection,
            id: "S6",
            product: "pro.monthly",
            kind: "refund",
            price: 1_500_000,
            currency: "JPY",
            firstSeen: 41,
            refundSeen: 42,
            revocationType: "REFUND_PRORATED",
            percentage: 33333
        )
        // Seen in the earlier run only: no money in run 42.
        try insertPriced(
            connection,
            id: "S7",
            product: "pro.monthly",
            kind: "renewal",
            price: 9990,
            currency: "USD",
            firstSeen: 41
        )
        try connection.execute(
            """
            INSERT INTO app_store_notifications (notification_uuid, notification_type, subtype,
                original_transaction_id, signed_payload, source, subscription_known, first_seen_run_id)
            VALUES ('n1', 'DID_RENEW', NULL, '1000001', 'p', 'history', true, 42),
                   ('n2', 'REFUND', NULL, '9990002', 'p', 'history', false, 42),
                   ('n3', 'DID_RENEW', NULL, '9990001', 'p', 'history', false, 42),
                   ('n4', 'DID_RENEW', NULL, '9990001', 'p', 'history', false, 42),
                   ('n5', 'TEST', NULL, NULL, 'p', 'history', false, 42),
                   ('n6', 'EXPIRED', 'VOLUNTARY', '9990003', 'p', 'history', false, 41)
            """
        )
        return (database, connection)
    }

    static func generate(_ connection: PostgresConnection, runId: Int64 = 42) throws -> (URL, ReportTempDirectory) {
        let directory = try ReportTempDirectory()
        let folder = try ReportGenerator(connection: connection).generate(runId: runId, reportDirectory: directory.path)
        return (folder, directory)
    }

    @Test func summaryJSONHasMoneyByCurrencyAndNotifications() throws {
        let (database, connection) = try Self.prepare()
        defer {
            connection.close()
            database.drop()
        }
        let (folder, directory) = try Self.generate(connection)
        _ = directory
        let data = try Data(contentsOf: folder.appendingPathComponent("summary.json"))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let money = try #require(object["money"] as? [String: Any])
        let byCurrency = try #require(money["by_currency"] as? [String: Any])
        #expect(Set(byCurrency.keys) == ["USD", "JPY"])

        let usd = try #require(byCurrency["USD"] as? [String: Any])
        #expect(usd["source"] as? String == "ledger (App Store Server API)")
        #expect(usd["currency"] as? String == "USD")
        #expect(usd["paid_transactions"] as? Int == 2)
        #expect(usd["gross"] as? String == "59.98")
        #expect(usd["gross_milliunits"] as? Int == 59980)
        #expect(usd["full_refunds"] as? Int == 1)
        #expect(usd["refunded_full"] as? String == "9.99")
        #expect(usd["prorated_refunds"] as? Int == 1)
        #expect(usd["refunded_prorated"] as? String == "22.50")
        #expect(usd["refunded_prorated_milliunits"] as? Int == 22500)
        #expect(usd["refunds"] as? Int == 2)
        #expect(usd["refunded"] as? String == "32.49")
        #expect(usd["net"] as? String == "27.49")
        #expect(usd["net_milliunits"] as? Int == 27490)
        let usdProducts = try #require(usd["products"] as? [[String: Any]])
        #expect(usdProducts.map { $0["product_id"] as? String } == ["pro.monthly", "pro.yearly"])
        #expect(usdProducts.map { $0["net"] as? String } == ["0.00", "27.49"])

        let jpy = try #require(byCurrency["JPY"] as? [String: Any])
        #expect(jpy["gross"] as? String == "1500")
        #expect(jpy["gross_milliunits"] as? Int == 1_500_000)
        #expect(jpy["refunded_prorated"] as? String == "500")
        #expect(jpy["refunded"] as? String == "500")
        #expect(jpy["net"] as? String == "1000")
        #expect(jpy["paid_transactions"] as? Int == 1)
        #expect((jpy["products"] as? [[String: Any]])?.count == 1)

        // Amounts are strings or integers, never floating-point numbers.
        let text = String(decoding: data, as: UTF8.self)
        #expect(!text.contains("59.98,") && !text.contains(": 59.98"))

        // The catalog estimates (verifyReceipt rows) are those of the sample data alone, labelled as such.
        let catalog = RunSummary(data: ReportSampleData.data(runId: 42)).money
        let summary = try JSONDecoder().decode(RunSummary.self, from: data)
        #expect(summary.money.renewalRevenue == catalog.renewalRevenue)
        #expect(summary.money.refunded == catalog.refunded)
        #expect(summary.money.renewalRevenue.allSatisfy { $0.source == "catalog (products table)" })
        let renewal = try #require((money["renewal_revenue"] as? [[String: Any]])?.first)
        #expect(renewal["source"] as? String == "catalog (products table)")

        let notifications = try #require(object["notifications"] as? [String: Any])
        #expect(notifications["total"] as? Int == 5)
        #expect(notifications["by_type"] as? [String: Int] == ["DID_RENEW": 3, "REFUND": 1, "TEST": 1])
        #expect(notifications["unknown_subscriptions"] as? [String] == ["9990001", "9990002"])

        // The decoded file is the streamed summary, and the demo's lines come from it.
        #expect(try ReportGenerator(connection: connection).summary(runId: 42).summary == summary)
        let lines = summary.moneyLines()
        #expect(lines.first == "money per currency, period 2024-04-28T00:00:00Z to 2024-05-01T00:00:00Z:")
        #expect(
            lines.contains(
                "  JPY  gross 1500 (1)  refunded 500 (0 full, 1 prorated)  net 1000  est. net proceeds 700  "
                    + "[ledger (App Store Server API)]"
            )
        )
        #expect(
            lines.contains(
                "  USD  gross 59.98 (2)  refunded 32.49 (1 full, 1 prorated)  net 27.49  est. net proceeds 19.24  "
                    + "[ledger (App Store Server API)]"
            )
        )
    }

    @Test func moneyCSVHasOneRowPerCurrencyAndProduct() throws {
        let (database, connection) = try Self.prepare()
        defer {
            connection.close()
            database.drop()
        }
        let (folder, directory) = try Self.generate(connection)
        _ = directory
        let text = try String(contentsOf: folder.appendingPathComponent("money.csv"), encoding: .utf8)
        #expect(text.hasSuffix("\r\n"))
        let lines = text.split(separator: "\r\n", omittingEmptySubsequences: true).map(String.init)
        #expect(lines.first == MoneyTables.columns.joined(separator: ","))
        let ledger = lines.filter { $0.contains(",ledger (App Store Server API),") }
        #expect(
            ledger == [
                // Then the estimated proceeds (first year of paid service: 30%; refunds reverse theirs).
                "JPY,pro.monthly,ledger (App Store Server API),1,1500,0,0,1,500,1,500,1000,1050,350,700,period",
                "USD,pro.monthly,ledger (App Store Server API),1,9.99,1,9.99,0,0.00,1,9.99,0.00,6.99,6.99,0.00,period",
                "USD,pro.yearly,ledger (App Store Server API),1,49.99,0,0.00,1,22.50,1,22.50,27.49,34.99,15.75,"
                    + "19.24,period",
            ]
        )
        let catalog = lines.dropFirst().filter { !$0.contains(",ledger (App Store Server API),") }
        #expect(!catalog.isEmpty)
        #expect(catalog.allSatisfy { $0.contains(",catalog (products table),") })
        // Every row names its currency and its scope; sorted by currency (all in the period here).
        #expect(lines.dropFirst().allSatisfy { $0.hasSuffix(",period") })
        let currencies = lines.dropFirst().map { String($0.prefix(3)) }
        #expect(currencies == currencies.sorted())
        #expect(currencies.allSatisfy { $0.range(of: "^[A-Z]{3}$", options: .regularExpression) != nil })
    }

    @Test func reportHTMLShowsMoneyPerCurrencyAndNotifications() throws {
        let (database, connection) = try Self.prepare()
        defer {
            connection.close()
            database.drop()
        }
        let (folder, directory) = try Self.generate(connection)
        _ = directory
        let html = try String(contentsOf: folder.appendingPathComponent("report.html"), encoding: .utf8)
        #expect(html.contains("id=\"money-by-currency\""))
        #expect(html.contains("Money per currency (source: ledger (App Store Server API))"))
        #expect(html.contains("<td>USD</td><td class=\"n\">2</td><td class=\"n\">59.98</td>"))
        #expect(html.contains("<td class=\"n\">27.49</td>"))
        #expect(html.contains("<td>JPY</td><td class=\"n\">1</td><td class=\"n\">1500</td>"))
        #expect(html.contains("Money per currency (source: catalog (products table))"))
        #expect(html.contains("id=\"notifications\""))
        #expect(html.contains("App Store Server Notifications (5)"))
        #expect(html.contains("<td>9990001</td>"))
        #expect(!html.contains("9990003"))
        #expect(!html.contains("<script"))
        // The streamed folder equals the in-memory rendering, money.csv included.
        let loaded = try ReportLoader(connection: connection).load(runId: 42)
        for (name, bytes) in try ReportFiles.render(loaded) {
            #expect(try Data(contentsOf: folder.appendingPathComponent(name)) == bytes, "\(name) differs")
        }
    }

    @Test func aVerifyReceiptOnlyRunHasNoLedgerMoneyAndNoNotifications() throws {
        let (database, connection) = try ReportDatabaseTests.prepare()
        defer {
            connection.close()
            database.drop()
        }
        let (folder, directory) = try Self.generate(connection)
        _ = directory
        let data = try Data(contentsOf: folder.appendingPathComponent("summary.json"))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let byCurrency = try #require((object["money"] as? [String: Any])?["by_currency"] as? [String: Any])
        #expect(byCurrency.isEmpty)
        let notifications = try #require(object["notifications"] as? [String: Any])
        #expect(notifications["total"] as? Int == 0)
        #expect(notifications["unknown_subscriptions"] as? [String] == [])
        let html = try String(contentsOf: folder.appendingPathComponent("report.html"), encoding: .utf8)
        #expect(html.contains("No transaction with a signed price in this run."))
        #expect(html.contains("No notifications were read in this run."))
        let csv = try String(contentsOf: folder.appendingPathComponent("money.csv"), encoding: .utf8)
        #expect(!csv.contains("ledger (App Store Server API)"))
    }

    @Test func aDatabaseWithoutMigration004StillGetsItsReport() throws {
        let database = try TestDatabase.make()
        let connection = try database.connect()
        defer {
            connection.close()
            database.drop()
        }
        let sqlDirectory = EndToEndFixture.packageRoot.appendingPathComponent("sql").path
        for file in try MigrationDirectory(path: sqlDirectory).files() where file.version < 4 {
            try connection.executeScript(try String(contentsOfFile: file.path, encoding: .utf8))
        }
        try ReportDatabaseTests.insert(ReportSampleData.data(runId: 42), earlierRunId: 41, connection: connection)
        let (folder, directory) = try Self.generate(connection)
        _ = directory
        let summary = try JSONDecoder().decode(
            RunSummary.self,
            from: Data(contentsOf: folder.appendingPathComponent("summary.json"))
        )
        #expect(summary.money.byCurrency.isEmpty)
        #expect(summary.notifications == ReportNotifications())
        #expect(summary.money.renewalRevenue == RunSummary(data: ReportSampleData.data(runId: 42)).money.renewalRevenue)
    }

    @Test func proratedRefundsRoundToTheCurrencysMinorUnit() {
        // 1,500 yen x 33.333% = 499.995 yen -> 500 yen; 1,001 yen x 50% = 500.5 yen -> 501 (half away from zero).
        #expect(CurrencyFormat.prorated(priceMilliunits: 1_500_000, percentage: 33333, currency: "JPY") == 500_000)
        #expect(CurrencyFormat.prorated(priceMilliunits: 1_001_000, percentage: 50000, currency: "JPY") == 501_000)
        #expect(CurrencyFormat.prorated(priceMilliunits: 1_001_000, percentage: 49999, currency: "JPY") == 500_000)
        // 9.99 x 45% = 4.4955 -> 4.50; 9.99 x 33.333% = 3.32996... -> 3.33; KWD has three places.
        #expect(CurrencyFormat.prorated(priceMilliunits: 9990, percentage: 45000, currency: "USD") == 4500)
        #expect(CurrencyFormat.prorated(priceMilliunits: 9990, percentage: 33333, currency: "USD") == 3330)
        #expect(CurrencyFormat.prorated(priceMilliunits: 2999, percentage: 33333, currency: "KWD") == 1000)
        #expect(CurrencyFormat.format(milliunits: 1_500_000, currency: "JPY") == "1500")
        #expect(CurrencyFormat.format(milliunits: 9990, currency: "USD") == "9.99")
        #expect(CurrencyFormat.format(milliunits: 0, currency: "EUR") == "0.00")
        #expect(CurrencyFormat.format(milliunits: -4500, currency: "USD") == "-4.50")
        #expect(CurrencyFormat.format(milliunits: 1999, currency: "KWD") == "1.999")
        #expect(CurrencyFormat.format(milliunits: 9995, currency: "USD") == "9.995")
    }
}
