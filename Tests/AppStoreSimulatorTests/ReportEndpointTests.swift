import Foundation
import TestSupport
import Testing

@testable import AppStoreSimulator

/// `GET /v1/salesReports` and `GET /v1/financeReports` over loopback HTTP (docs/simulator.md, "App Store Connect
/// reports"): each day's Subscriber report holds exactly the events the truth implies for that Pacific day, and the
/// Financial reports of a fiscal month agree with each other and with the daily reports.
@Suite struct ReportEndpointTests {
    typealias Truth = SubscriberReportTruth
    static let now = SimTime.parseRFC3339("2026-12-01T12:00:00Z")!
    /// The tax included in each country's prices (docs/simulator.md, "App Store Connect reports"), written out here
    /// rather than read from the simulator's storefronts, so the test states what the reports must show.
    static let taxPercent: [String: Int64] = ["US": 0, "CA": 0, "BR": 0, "GB": 20, "DE": 19, "JP": 10]

    func withReports<T>(_ body: (SimulatorServer, ReportClient) async throws -> T) async throws -> T {
        try await withSimulator(subscriptions: 2000, now: Self.now, configure: { $0.anchor = PopulationTests.now }) {
            try await body($0, ReportClient($0))
        }
    }

    func servedKeys(_ client: ReportClient, _ date: String) async throws -> [String] {
        let rows = ReportClient.rows(try await client.text(client.subscriberPath(date)))
        #expect(rows.allSatisfy { $0["Event Date"] == date }, "\(date)")
        for row in rows {
            // Proceeds: 70% of the price without its tax, 85% with "Rate After One Year", to within the minor unit.
            let price = AppleReportFixtures.milliunits(row["Customer Price"] ?? "")
            let proceeds = AppleReportFixtures.milliunits(row["Developer Proceeds"] ?? "")
            let share: Int64 = row["Proceeds Reason"] == "Rate After One Year" ? 85 : 70
            let tax = Self.taxPercent[row["Country"] ?? ""]
            #expect(tax != nil, "\(row)")
            let net = 100 + (tax ?? 0)
            #expect(abs(proceeds * net - price * share) <= 1000 * net, "\(row)")
            #expect(row["Proceeds Currency"] == row["Customer Currency"])
        }
        return rows.map(Truth.key).sorted()
    }

    @Test func daysAcrossBothClockChangesHoldExactlyTheTruthsEventsOfThatPacificDay() async throws {
        try await withReports { server, client in
            for date in ["2026-03-08", "2026-11-01", "2026-11-20"] {
                let expected = Truth.expectedKeys(server.population, date: date)
                #expect(expected.count > 5, "\(date): too few events to show anything")
                let served = try await servedKeys(client, date)
                #expect(served == expected, "\(date)")
            }
        }
    }

    @Test func anEventAt0730UTCIsInThePreviousPacificDaysReport() async throws {
        try await withReports { server, client in
            let pop = server.population
            let november = SimTime.parseRFC3339("2026-11-02T00:00:00Z")!
            let candidates = pop.families.filter { !$0.sandbox && $0.bundleId == pop.bundleId && $0.fixedStatus == nil }
                .flatMap { family in family.subscriptions.flatMap { $0.timeline(at: Self.now).transactions } }
                .filter { !$0.familyShared && $0.purchase > november && $0.purchase < PopulationTests.now }
            let early = try #require(candidates.first { ($0.purchase % SimTime.day) / SimTime.hour == 7 })
            let utcDate = String(SimTime.rfc3339(early.purchase).prefix(10))
            let pacific = Truth.pacificDate(early.purchase)
            #expect(pacific < utcDate)
            let served = try await servedKeys(client, pacific)
            #expect(served == Truth.expectedKeys(pop, date: pacific))
            let product = pop.catalog.appleId(of: early.product)
            #expect(served.contains { $0.hasPrefix(product + "|") })
        }
    }

    @Test func theFinancialReportsOfAFiscalMonthAgreeWithEachOtherAndWithTheDays() async throws {
        try await withReports { server, client in
            let consolidatedText = try await client.text(client.financePath("2027-01", detailed: false))
            let detailedText = try await client.text(client.financePath("2027-01", detailed: true))
            let consolidated = ReportClient.rows(consolidatedText)
            let detailed = ReportClient.rows(detailedText)
            #expect(!consolidated.isEmpty && !detailed.isEmpty)
            #expect(detailedText.hasPrefix("Start Date\t09/27/2026\nEnd Date\t10/31/2026\n"))
            #expect(consolidated.allSatisfy { $0["Start Date"] == "09/27/2026" && $0["End Date"] == "10/31/2026" })
            func totals(_ rows: [[String: String]], _ share: String) -> [String: (Int64, Int)] {
                rows.reduce(into: [:]) { sums, row in
                    let currency = row["Partner Share Currency"] ?? ""
                    sums[currency, default: (0, 0)].0 += AppleReportFixtures.milliunits(row[share] ?? "")
                    sums[currency, default: (0, 0)].1 += Int(row["Quantity"] ?? "") ?? 0
                }
            }
            let a = totals(consolidated, "Extended Partner Share")
            let b = totals(detailed, "Extended Partner Share")
            #expect(a.keys.sorted() == b.keys.sorted())
            for currency in a.keys { #expect(a[currency]! == b[currency]!, "\(currency)") }
            #expect(consolidatedText.contains("Total_Rows\t"))
            #expect(detailed.contains { $0["Sale or Return"] == "R" && ($0["Quantity"] ?? "").hasPrefix("-") })
            try await checkDaysAgainstDetail(client, detailed)
        }
    }

    /// Every paid event of a day whose settlement cannot leave the month (27 September to 28 October) is one detailed
    /// row with that transaction date, settled 0 to 3 days later.
    func checkDaysAgainstDetail(_ client: ReportClient, _ detailed: [[String: String]]) async throws {
        var day = try #require(ReportDay(parsing: "2026-09-27"))
        while day.iso <= "2026-10-28" {
            let daily = ReportClient.rows(try await client.text(client.subscriberPath(day.iso)))
                .filter { $0["Customer Price"] != "0.00" && $0["Customer Price"] != "0" }
            let rows = detailed.filter { $0["Transaction Date"] == day.us }
            #expect(rows.count == daily.count, "\(day.iso)")
            let proceeds = daily.reduce(Int64(0)) {
                $0 + AppleReportFixtures.milliunits($1["Developer Proceeds"] ?? "")
            }
            #expect(
                rows.reduce(Int64(0)) { $0 + AppleReportFixtures.milliunits($1["Extended Partner Share"] ?? "") }
                    == proceeds
            )
            let settled = rows.compactMap { row -> Int64? in
                let p = (row["Settlement Date"] ?? "").split(separator: "/").compactMap { Int64($0) }
                return p.count == 3 ? ReportDay(year: p[2], month: p[0], day: p[1]).map { $0.number - day.number } : nil
            }
            #expect(settled.count == rows.count && settled.allSatisfy { (0...3).contains($0) }, "\(day.iso)")
            day = day.adding(1)
        }
    }
}
