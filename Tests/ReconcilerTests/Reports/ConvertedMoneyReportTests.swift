import Foundation
import Postgres
import Reconciler
import TestSupport
import Testing

/// `--fx-rates FILE`: the period's ledger money converted into one reporting currency with the user's rates
/// (docs/reports.md, "Converted totals"), on a real PostgreSQL (the rows of `ProceedsReportTests`: USD gross
/// 19.98, refunded 22.50, est. proceeds 15.48, proceeds refunded 15.75; JPY gross 1500, est. proceeds 1275),
/// and the rates files that are refused, each naming its line.
@Suite struct ConvertedMoneyReportTests {
    static func rates(_ text: String, reporting: String? = nil) throws -> FXRates {
        try FXRates.parse(text, file: "rates.csv", reportingCurrency: reporting)
    }

    /// The message of the `UsageError` parsing `text` throws (nil when it parses).
    static func refusal(_ text: String, reporting: String? = nil) -> String? {
        do {
            _ = try FXRates.parse(text, file: "rates.csv", reportingCurrency: reporting)
            return nil
        } catch {
            #expect(error.exitCode == .usage)
            return error.message
        }
    }

    @Test func convertsEachCurrencyWithTheUsersRatesThenAddsThem() throws {
        let (database, connection) = try ProceedsReportTests.prepare()
        defer {
            connection.close()
            database.drop()
        }
        let fx = try Self.rates(
            "# month-end rates\r\ncurrency,rate\r\nreporting_currency,EUR\r\nUSD,0.92\r\nJPY,0.0061\r\n"
        )
        let directory = try ReportTempDirectory()
        let folder = try ReportGenerator(connection: connection, moneyOptions: ReportMoneyOptions(fxRates: fx))
            .generate(runId: 42, reportDirectory: directory.path)
        let data = try Data(contentsOf: folder.appendingPathComponent("summary.json"))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let money = try #require(object["money"] as? [String: Any])
        let converted = try #require(money["converted"] as? [String: Any])
        #expect(converted["reporting_currency"] as? String == "EUR")
        #expect((converted["source"] as? String)?.hasPrefix("converted with the user's exchange rates") == true)
        #expect(converted["rates_file"] as? String == "rates.csv")
        #expect(converted["complete"] as? Bool == true)
        // USD 19.98 x 0.92 = 18.3816 -> 18.38, JPY 1500 x 0.0061 = 9.15: 27.53. Proceeds: 15.48 x 0.92 = 14.2416
        // -> 14.24, 1275 x 0.0061 = 7.7775 -> 7.78 (half away from zero): 22.02; refunded 20.70, their proceeds
        // 14.49.
        #expect(converted["gross"] as? String == "27.53")
        #expect(converted["gross_milliunits"] as? Int == 27530)
        #expect(converted["refunded"] as? String == "20.70")
        #expect(converted["net"] as? String == "6.83")
        #expect(converted["proceeds"] as? String == "22.02")
        #expect(converted["proceeds_refunded"] as? String == "14.49")
        #expect(converted["net_proceeds"] as? String == "7.53")
        let lines = try #require(converted["currencies"] as? [[String: Any]])
        #expect(lines.map { $0["currency"] as? String } == ["JPY", "USD"])
        #expect(lines.map { $0["rate"] as? String } == ["0.0061", "0.92"])
        #expect(lines.map { $0["proceeds"] as? String } == ["7.78", "14.24"])
        // The currencies themselves are untouched, never added together.
        let byCurrency = try #require(money["by_currency"] as? [String: Any])
        #expect((byCurrency["USD"] as? [String: Any])?["gross"] as? String == "19.98")
        #expect(try JSONDecoder().decode(RunSummary.self, from: data).money.converted?.totals.grossMilliunits == 27530)
        let html = try String(contentsOf: folder.appendingPathComponent("report.html"), encoding: .utf8)
        #expect(html.contains("Converted to EUR with your exchange rates"))
        #expect(html.contains("<td>total</td><td class=\"n\"></td><td class=\"n\">27.53</td>"))
        #expect(!html.contains("money-converted-incomplete"))

        // Without the flag: null, and no converted section.
        let plain = try ReportGenerator(connection: connection).summary(runId: 42).summary
        #expect(plain.money.converted == nil)
        let plainJSON = String(decoding: try plain.jsonData(), as: UTF8.self)
        #expect(plainJSON.contains("\"converted\" : null"))
    }

    @Test func aCurrencyWithoutARateIsNamedAndLeftOutOfTheTotal() throws {
        let (database, connection) = try ProceedsReportTests.prepare()
        defer {
            connection.close()
            database.drop()
        }
        // USD is the reporting currency (rate 1); JPY has no rate.
        let fx = try Self.rates("GBP,1.27\n", reporting: "USD")
        let money = try ReportGenerator(connection: connection, moneyOptions: ReportMoneyOptions(fxRates: fx))
            .summary(runId: 42).summary.money
        let converted = try #require(money.converted)
        #expect(!converted.isComplete)
        #expect(converted.currenciesWithoutRate == ["JPY"])
        #expect(converted.format(converted.totals.grossMilliunits) == "19.98")
        #expect(converted.format(converted.totals.netProceedsMilliunits) == "-0.27")
        #expect(converted.line().contains("(incomplete: no rate for JPY)"))
    }

    @Test func badRatesFilesAreRefusedNamingTheLine() {
        #expect(
            Self.refusal("reporting_currency,EUR\nUSD,abc\n")?.contains("rates.csv line 2: the rate of USD") == true
        )
        #expect(Self.refusal("USD,0.92\n\nUSD,0.93\n", reporting: "EUR")?.contains("line 3: USD given twice") == true)
        #expect(Self.refusal("usd,0.92", reporting: "EUR")?.contains("line 1: usd is not an ISO 4217 code") == true)
        #expect(Self.refusal("USD;0.92", reporting: "EUR")?.contains("line 1: expected two columns") == true)
        #expect(Self.refusal("USD,0", reporting: "EUR")?.contains("line 1:") == true)
        #expect(Self.refusal("USD,-0.92", reporting: "EUR")?.contains("line 1:") == true)
        #expect(Self.refusal("USD,=1+2", reporting: "EUR")?.contains("line 1:") == true)
        #expect(Self.refusal("USD,1e3", reporting: "EUR")?.contains("line 1:") == true)
        #expect(Self.refusal("USD,0.92\n")?.contains("no reporting currency") == true)
        #expect(
            Self.refusal("reporting_currency,EUR\nUSD,0.92", reporting: "GBP")?.contains("--reporting-currency") == true
        )
        #expect(Self.refusal("reporting_currency,EUR\nEUR,1.1\nUSD,0.92")?.contains("must be 1") == true)
        #expect(Self.refusal("reporting_currency,EUR\n")?.contains("no rate") == true)
        #expect(Self.refusal("USD,0.92", reporting: "euro")?.contains("--reporting-currency") == true)
        #expect(Self.refusal("\u{FEFF}currency,rate\nUSD,0.92\n# end\n", reporting: "EUR") == nil)
    }

    @Test func theReportCommandExitsWith64OnABadRatesFile() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("rr-fx-\(UUID().uuidString).csv")
        try Data("reporting_currency,EUR\nUSD,0.92\nJPY,lots\n".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let bad = try await BadInputConfigurationTests.runReconciler(
            ["report", "1", "--fx-rates", file.path, "--database-url", "postgresql:///unused"],
            environment: [:]
        )
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("\(file.path) line 3: the rate of JPY"))
        let missing = try await BadInputConfigurationTests.runReconciler(
            ["report", "1", "--fx-rates", file.path + ".missing", "--database-url", "postgresql:///unused"],
            environment: [:]
        )
        #expect(missing.status == 64)
        #expect(missing.stderr.contains("cannot read"))
        let orphan = try await BadInputConfigurationTests.runReconciler(
            ["report", "1", "--reporting-currency", "EUR", "--database-url", "postgresql:///unused"],
            environment: [:]
        )
        #expect(orphan.status == 64)
    }
}
