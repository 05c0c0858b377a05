import AppleReports
import Foundation
import Postgres
import Reconciler
import TestSupport
import Testing

/// Calibrated proceeds (docs/reports.md, "Calibrated proceeds"): where the imported Subscriber reports give Apple's
/// rate for a transaction's storefront, currency and tier, the run's report prices its proceeds with it (tax
/// included) and says so; elsewhere, and with a configured rate, the commission estimate stays. Run 42 of
/// `ProceedsReportTests` (as of 2024-05-01), whose JPY renewal (JPN, after a year) is estimated at 1,275 yen.
@Suite struct CalibratedProceedsTests {
    /// Imports a Subscriber report of Japanese sales after a year: 1,500 yen paying 1,159 (10% consumption tax, then
    /// 15%), two in the window and one 100 days before the as-of at an absurd rate, which the window leaves out.
    static func importJapaneseSales(_ connection: PostgresConnection) throws {
        let after = ["Country": "JP", "Proceeds Reason": "Rate After One Year"]
        let rows = [
            AppleReportFixtures.subscriberRow(
                price: "1500",
                currency: "JPY",
                proceeds: "1159",
                after.merging(["Event Date": "2024-04-20"]) { $1 }
            ),
            AppleReportFixtures.subscriberRow(
                price: "1500",
                currency: "JPY",
                proceeds: "1159",
                after.merging(["Event Date": "2024-04-28"]) { $1 }
            ),
            AppleReportFixtures.subscriberRow(
                price: "1500",
                currency: "JPY",
                proceeds: "100",
                after.merging(["Event Date": "2024-01-22"]) { $1 }
            ),
        ]
        let directory = try ReportTempDirectory()
        let path = directory.path + "/Subscriber_80012345_20240428.txt"
        try AppleReportFixtures.subscriberReport(rows).write(toFile: path, atomically: true, encoding: .utf8)
        let result = AppleReportImporter(connection: connection).importFile(path, vendorNumber: nil)
        if case .failure(let error) = result.outcome { Issue.record("import: \(error)") }
    }

    @Test func aStorefrontWithMeasuredRatesGetsThemAndTheReportSaysSo() throws {
        let (database, connection) = try ProceedsReportTests.prepare()
        defer {
            connection.close()
            database.drop()
        }
        try Self.importJapaneseSales(connection)
        let money = try ProceedsReportTests.summary(connection, ReportMoneyOptions())
        let jpy = try #require(money.byCurrency.currencies["JPY"]?.totals)
        #expect(jpy.proceeds == "1159")
        #expect(jpy.calibratedTransactions == 1)
        // No rate for the United States or Ecuador: their estimates are the commission's, as before.
        let usd = try #require(money.byCurrency.currencies["USD"]?.totals)
        #expect(usd.proceeds == "15.48")
        #expect(usd.calibratedTransactions == 0)
        let rate = try #require(
            money.proceedsCalibration.rates[.init(country: "JP", currency: "JPY", afterFirstYear: true)]
        )
        #expect(rate == .init(priceMilliunits: 3_000_000, proceedsMilliunits: 2_318_000, units: 2))
        #expect(money.proceedsCalibration.rates.count == 1)

        let directory = try ReportTempDirectory()
        let folder = try ReportGenerator(connection: connection).generate(runId: 42, reportDirectory: directory.path)
        let data = try Data(contentsOf: folder.appendingPathComponent("summary.json"))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let summaryMoney = try #require(object["money"] as? [String: Any])
        let byCurrency = try #require(summaryMoney["by_currency"] as? [String: Any])
        let yen = try #require(byCurrency["JPY"] as? [String: Any])
        #expect(yen["calibrated_transactions"] as? Int == 1)
        #expect((yen["proceeds_source"] as? String)?.hasPrefix("calibrated") == true)
        let dollars = try #require(byCurrency["USD"] as? [String: Any])
        #expect((dollars["proceeds_source"] as? String)?.hasPrefix("estimate") == true)
        let calibration = try #require(summaryMoney["proceeds_calibration"] as? [String: Any])
        #expect(calibration["window_days"] as? Int == 90)
        let rates = try #require(calibration["rates"] as? [[String: Any]])
        #expect(rates.first?["tier"] as? String == "after_first_year")
        #expect(rates.first?["proceeds_share"] as? Double == 0.7727)
        #expect(
            try JSONDecoder().decode(RunSummary.self, from: data).money.proceedsCalibration == money.proceedsCalibration
        )
        let html = try String(contentsOf: folder.appendingPathComponent("report.html"), encoding: .utf8)
        #expect(html.contains("id=\"proceeds-calibrated\""))
        #expect(html.contains("JP JPY after a year 77.27% (2)"))
    }

    @Test func aConfiguredRateIsNeverCalibrated() throws {
        let (database, connection) = try ProceedsReportTests.prepare()
        defer {
            connection.close()
            database.drop()
        }
        try Self.importJapaneseSales(connection)
        let fixed = try ProceedsReportTests.summary(connection, ReportMoneyOptions(commission: .fixed(20000)))
        #expect(fixed.byCurrency.currencies["JPY"]?.totals.proceeds == "1200")
        #expect(fixed.byCurrency.currencies["JPY"]?.totals.calibratedTransactions == 0)
        #expect(fixed.proceedsCalibration.isEmpty)
    }

    @Test func ratesRoundHalfAwayFromZeroToTheMinorUnitAndStayUnknownElsewhere() {
        let calibration = ProceedsCalibration(rates: [
            .init(country: "GB", currency: "GBP", afterFirstYear: false): .init(
                priceMilliunits: 8990,
                proceedsMilliunits: 5240,
                units: 1
            )
        ])
        // 12.99 x 5.24 / 8.99 = 7.5715...: 7.57.
        #expect(calibration.proceeds(of: 12990, currency: "GBP", storefront: "GBR", afterFirstYear: false) == 7570)
        #expect(calibration.proceeds(of: 12990, currency: "GBP", storefront: "GBR", afterFirstYear: true) == nil)
        #expect(calibration.proceeds(of: 12990, currency: "GBP", storefront: nil, afterFirstYear: false) == nil)
        #expect(calibration.proceeds(of: 12990, currency: "EUR", storefront: "GBR", afterFirstYear: false) == nil)
        // A huge yen amount does not overflow: 10^9 milliunits x 5240 / 8990.
        #expect(
            calibration.proceeds(of: 9_000_000_000, currency: "GBP", storefront: "GBR", afterFirstYear: false)
                == 5_245_828_700
        )
        let estimate = ProceedsEstimate(commission: .standard, calibration: calibration)
        #expect(estimate.proceeds(of: 8990, currency: "GBP", storefront: "GBR", afterFirstYear: false) == (5240, true))
        #expect(estimate.proceeds(of: 9990, currency: "USD", storefront: "USA", afterFirstYear: false) == (6990, false))
        #expect(ProceedsEstimate(commission: .fixed(30000), calibration: calibration).calibration.isEmpty)
    }
}
