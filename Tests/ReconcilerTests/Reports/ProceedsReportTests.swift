import Foundation
import Postgres
import Reconciler
import TestSupport
import Testing

/// Estimated proceeds and money per storefront (docs/reports.md, "Estimated proceeds", "money-storefronts.csv")
/// on a real PostgreSQL: run 42 of `ReportSampleData` plus priced ledger rows whose subscriptions are in their
/// first year of paid service or past it, in two storefronts of one currency.
@Suite struct ProceedsReportTests {
    /// Inserts one priced ledger row of subscription `original` bought `days` from run 42's as-of.
    static func insert(
        _ connection: PostgresConnection,
        id: String,
        original: String,
        days: Double,
        price: Int64,
        currency: String = "USD",
        storefront: String = "USA",
        firstSeen: Int64,
        refundSeen: Int64? = nil,
        percentage: Int64? = nil,
        trial: Bool = false
    ) throws {
        try connection.execute(
            """
            INSERT INTO subscription_transactions (transaction_id, original_transaction_id, product_id, kind,
                purchase_date, expires_date, is_trial, first_seen_run_id, refund_seen_run_id, price_milliunits,
                currency, storefront, cancellation_date, revocation_date, revocation_type, revocation_percentage,
                signed_transaction)
            VALUES ($1, $2, 'pro.monthly', $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12, $13, $14, 'eyJ.signed.jws')
            """,
            [
                id, original, refundSeen == nil ? "renewal" : "refund", ReportSampleData.date(days),
                ReportSampleData.date(days + 30), trial, firstSeen, refundSeen, price, currency, storefront,
                refundSeen == nil ? nil : ReportSampleData.date(-1),
                percentage == nil ? (refundSeen == nil ? nil : "REFUND_FULL") : "REFUND_PRORATED", percentage,
            ]
        )
    }

    /// Run 42's period is the three days before its as-of; rows first seen by run 41 and dated earlier are
    /// outside it (they only date the start of paid service).
    static func prepare() throws -> (TestDatabase, PostgresConnection) {
        let (database, connection) = try ReportDatabaseTests.prepare()
        // A (USA): a free trial, paid service from 399 days ago, a 9.99 renewal in the period: after the first
        // year, 15%: 9.99 - 1.4985 (1.50) = 8.49.
        try insert(connection, id: "A0", original: "A", days: -400, price: 0, firstSeen: 41, trial: true)
        try insert(connection, id: "A1", original: "A", days: -399, price: 9990, firstSeen: 41)
        try insert(connection, id: "A2", original: "A", days: -2, price: 9990, firstSeen: 42)
        // B (ECU, billed in USD): a first purchase in the period, 30%: 9.99 - 2.997 (3.00) = 6.99.
        try insert(connection, id: "B1", original: "B", days: -2, price: 9990, storefront: "ECU", firstSeen: 42)
        // C (USA): 49.99 bought 100 days ago, refunded 45% in the period (22.50), in its first year: the refund
        // reverses 22.50 - 6.75 = 15.75 of proceeds.
        try insert(
            connection,
            id: "C1",
            original: "C",
            days: -100,
            price: 49990,
            firstSeen: 41,
            refundSeen: 42,
            percentage: 45000
        )
        // D (JPN): paid since 800 days ago, a 1,500 yen renewal in the period at 15%: 1500 - 225 = 1275.
        try insert(
            connection,
            id: "D0",
            original: "D",
            days: -800,
            price: 1_500_000,
            currency: "JPY",
            storefront: "JPN",
            firstSeen: 41
        )
        try insert(
            connection,
            id: "D1",
            original: "D",
            days: -2,
            price: 1_500_000,
            currency: "JPY",
            storefront: "JPN",
            firstSeen: 42
        )
        return (database, connection)
    }

    static func summary(_ connection: PostgresConnection, _ options: ReportMoneyOptions) throws -> MoneySummary {
        try ReportGenerator(connection: connection, moneyOptions: options).summary(runId: 42).summary.money
    }

    @Test func commissionIs30PercentInTheFirstYearOfPaidServiceAnd15After() throws {
        let (database, connection) = try Self.prepare()
        defer {
            connection.close()
            database.drop()
        }
        let money = try Self.summary(connection, ReportMoneyOptions())
        let usd = try #require(money.byCurrency.currencies["USD"]?.totals)
        #expect(usd.gross == "19.98")
        #expect(usd.proceeds == "15.48")
        #expect(usd.refunded == "22.50")
        #expect(usd.proceedsRefunded == "15.75")
        #expect(usd.netProceeds == "-0.27")
        #expect(usd.net == "-2.52")
        #expect(usd.firstYearTransactions == 2)
        #expect(usd.afterFirstYearTransactions == 1)
        let jpy = try #require(money.byCurrency.currencies["JPY"]?.totals)
        #expect(jpy.proceeds == "1275")
        #expect(jpy.netProceedsMilliunits == 1_275_000)
        #expect(jpy.afterFirstYearTransactions == 1)
        #expect(money.proceedsEstimate == .standard)
    }

    @Test func smallBusinessIs15PercentForEverything() throws {
        let (database, connection) = try Self.prepare()
        defer {
            connection.close()
            database.drop()
        }
        let money = try Self.summary(connection, ReportMoneyOptions(commission: .smallBusiness))
        let usd = try #require(money.byCurrency.currencies["USD"]?.totals)
        // 8.49 + 8.49; the refund reverses 22.50 - 3.375 (3.38) = 19.12.
        #expect(usd.proceeds == "16.98")
        #expect(usd.proceedsRefunded == "19.12")
        #expect(usd.netProceeds == "-2.14")
        #expect(usd.gross == "19.98")
        #expect(money.byCurrency.currencies["JPY"]?.totals.proceeds == "1275")
        // A configured rate applies to every transaction as well.
        let fixed = try Self.summary(connection, ReportMoneyOptions(commission: .fixed(20000)))
        #expect(fixed.byCurrency.currencies["USD"]?.totals.proceeds == "15.98")
        #expect(CommissionPolicy.parseRate("17.5") == 17500)
        #expect(CommissionPolicy.parseRate("101") == nil)
        #expect(CommissionPolicy.parseRate("-5") == nil)
        #expect(CommissionPolicy.parseRate("1e2") == nil)
    }

    @Test func summaryJSONLabelsProceedsAsAnEstimateWithoutTaxes() throws {
        let (database, connection) = try Self.prepare()
        defer {
            connection.close()
            database.drop()
        }
        let directory = try ReportTempDirectory()
        let folder = try ReportGenerator(connection: connection).generate(runId: 42, reportDirectory: directory.path)
        let data = try Data(contentsOf: folder.appendingPathComponent("summary.json"))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let money = try #require(object["money"] as? [String: Any])
        let estimate = try #require(money["proceeds_estimate"] as? [String: Any])
        #expect(estimate["name"] as? String == "standard")
        #expect(estimate["first_year_rate_percent"] as? String == "30")
        #expect(estimate["after_first_year_rate_percent"] as? String == "15")
        #expect((estimate["label"] as? String)?.contains("taxes not estimated") == true)
        let usd = try #require((money["by_currency"] as? [String: Any])?["USD"] as? [String: Any])
        #expect(usd["net_proceeds"] as? String == "-0.27")
        #expect(usd["net_proceeds_milliunits"] as? Int == -270)
        #expect((usd["proceeds_source"] as? String)?.hasPrefix("estimate") == true)
        let storefronts = try #require(usd["storefronts"] as? [[String: Any]])
        #expect(storefronts.map { $0["storefront"] as? String } == ["ECU", "USA"])
        #expect(storefronts.map { $0["gross"] as? String } == ["9.99", "9.99"])
        #expect(storefronts.map { $0["refunded"] as? String } == ["0.00", "22.50"])
        #expect(storefronts.map { $0["net_proceeds"] as? String } == ["6.99", "-7.26"])
        #expect((storefronts.last?["products"] as? [[String: Any]])?.first?["product_id"] as? String == "pro.monthly")
        // The file decodes to the streamed summary (storefronts and proceeds included).
        let decoded = try JSONDecoder().decode(RunSummary.self, from: data)
        #expect(decoded == (try ReportGenerator(connection: connection).summary(runId: 42).summary))
        let html = try String(contentsOf: folder.appendingPathComponent("report.html"), encoding: .utf8)
        #expect(html.contains("id=\"proceeds-estimate\""))
        #expect(html.contains("taxes not estimated"))
        #expect(html.contains("<td>USD</td><td>ECU</td>"))
    }

    @Test func storefrontCSVSplitsEachCurrencyByStorefrontAndProduct() throws {
        let (database, connection) = try Self.prepare()
        defer {
            connection.close()
            database.drop()
        }
        let directory = try ReportTempDirectory()
        let folder = try ReportGenerator(connection: connection).generate(runId: 42, reportDirectory: directory.path)
        let text = try String(contentsOf: folder.appendingPathComponent("money-storefronts.csv"), encoding: .utf8)
        let lines = text.split(separator: "\r\n").map(String.init)
        #expect(lines.first == StorefrontMoneyTables.columns.joined(separator: ","))
        #expect(
            Array(lines.dropFirst()) == [
                "JPY,JPN,pro.monthly,ledger (App Store Server API),1,1500,0,0,0,0,0,0,1500,1275,0,1275,period",
                "USD,ECU,pro.monthly,ledger (App Store Server API),1,9.99,0,0.00,0,0.00,0,0.00,9.99,6.99,0.00,6.99,period",
                "USD,USA,pro.monthly,ledger (App Store Server API),1,9.99,0,0.00,1,22.50,1,22.50,-12.51,8.49,15.75,-7.26,period",
            ]
        )
        let money = try String(contentsOf: folder.appendingPathComponent("money.csv"), encoding: .utf8)
        #expect(
            money.contains(
                "USD,pro.monthly,ledger (App Store Server API),2,19.98,0,0.00,1,22.50,1,22.50,-2.52,15.48,15.75,-0.27,period\r\n"
            )
        )
    }

    @Test func aDryRunDatesPaidServiceFromTheLedgerAndItsOwnRows() throws {
        let (database, connection) = try Self.prepare()
        defer {
            connection.close()
            database.drop()
        }
        var dry = ReportSampleData.data(runId: 43, dryRun: true)
        dry.run.asOf = dry.run.asOf.addingTimeInterval(86_400)
        try ReportDatabaseTests.insertRun(dry.run, connection: connection)
        // A renewal of A (paid since 399 days ago in the ledger): 15%, 8.49; F's first purchase (the dry run's own
        // rows only): 30%, 6.99.
        try connection.execute(
            """
            INSERT INTO dry_run_transactions (run_id, transaction_id, original_transaction_id, product_id, kind,
                purchase_date, expires_date, price_milliunits, currency, storefront)
            VALUES (43, 'A3', 'A', 'pro.monthly', 'renewal', $1, $2, 9990, 'USD', 'USA'),
                   (43, 'F1', 'F', 'pro.monthly', 'initial', $1, $2, 9990, 'USD', 'USA')
            """,
            [ReportSampleData.date(0.5), ReportSampleData.date(30.5)]
        )
        let money = try ReportGenerator(connection: connection).summary(runId: 43).summary.money
        let usd = try #require(money.byCurrency.currencies["USD"]?.totals)
        #expect(usd.gross == "19.98")
        #expect(usd.proceeds == "15.48")
        #expect(usd.firstYearTransactions == 1)
        #expect(usd.afterFirstYearTransactions == 1)
    }

    @Test func noCellOfTheMoneyFilesBecomesAFormula() throws {
        let (database, connection) = try Self.prepare()
        defer {
            connection.close()
            database.drop()
        }
        try Self.insert(
            connection,
            id: "E1",
            original: "E",
            days: -2,
            price: 1990,
            currency: "EUR",
            storefront: "=HYPERLINK(\"http://x\")",
            firstSeen: 42
        )
        let directory = try ReportTempDirectory()
        let folder = try ReportGenerator(connection: connection).generate(runId: 42, reportDirectory: directory.path)
        for name in ["money.csv", "money-storefronts.csv"] {
            let text = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
            #expect(text.contains("'=HYPERLINK") || name == "money.csv")
            #expect(!text.contains(",=HYPERLINK"))
            for line in text.split(separator: "\r\n").dropFirst() {
                for cell in line.split(separator: ",", omittingEmptySubsequences: false) {
                    let first = cell.first.map(String.init) ?? ""
                    // A negative amount is a number, not a formula: "-" then a digit.
                    if first == "-" { #expect(cell.dropFirst().first?.isNumber == true, "\(cell)") }
                    #expect(!["=", "+", "@", "\t", "\r"].contains(first), "\(cell) in \(name)")
                }
            }
        }
    }
}
