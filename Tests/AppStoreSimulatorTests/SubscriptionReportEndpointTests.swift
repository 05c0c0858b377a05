import Foundation
import TestSupport
import Testing

@testable import AppStoreSimulator

/// The Subscription Event and Subscription reports of `GET /v1/salesReports` (docs/simulator.md, "Subscription Event
/// report", "Subscription report") agree with the truth: a day's purchase and refund events are the Subscriber
/// report's (`SubscriberReportTruth`), and the active counts are the timelines' at the end of the Pacific day.
@Suite struct SubscriptionReportEndpointTests {
    typealias Truth = SubscriberReportTruth
    static let purchaseEvents: Set<String> = [
        "Subscribe", "Start Introductory Offer", "Start Offer Code", "Renew",
        "Paid Subscription from Introductory Offer",
        "Upgrade", "Downgrade", "Crossgrade", "Reactivate",
    ]

    func path(_ client: ReportClient, _ type: String, _ date: String) -> String {
        client.subscriberPath(date, ["reportType": type, "reportSubType": "SUMMARY"])
    }

    func withReports<T>(_ body: (SimulatorServer, ReportClient) async throws -> T) async throws -> T {
        try await withSimulator(
            subscriptions: 2000,
            now: ReportEndpointTests.now,
            configure: { $0.anchor = PopulationTests.now }
        ) { try await body($0, ReportClient($0)) }
    }

    /// Quantity per Subscription Apple ID of the events `include` picks.
    static func quantities(_ rows: [[String: String]], _ include: (String) -> Bool) -> [String: Int] {
        var out: [String: Int] = [:]
        for row in rows where include(row["Event"] ?? "") {
            out[row["Subscription Apple ID"] ?? "?", default: 0] += Int(row["Quantity"] ?? "") ?? -1000
        }
        return out
    }

    @Test func aDaysEventsAreTheSubscriberReportsPurchasesAndRefunds() async throws {
        try await withReports { server, client in
            for date in ["2026-11-01", "2026-11-20"] {
                let rows = ReportClient.rows(try await client.text(path(client, "SUBSCRIPTION_EVENT", date)))
                #expect(rows.allSatisfy { $0["Event Date"] == date }, "\(date)")
                var purchases: [String: Int] = [:]
                var refunds: [String: Int] = [:]
                for key in Truth.expectedKeys(server.population, date: date) {
                    let fields = key.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
                    if fields[5] == "1" {
                        purchases[fields[0], default: 0] += 1
                    } else {
                        refunds[fields[0], default: 0] += 1
                    }
                }
                #expect(!purchases.isEmpty, "\(date)")
                #expect(Self.quantities(rows, Self.purchaseEvents.contains) == purchases, "\(date)")
                #expect(Self.quantities(rows, { $0 == "Refund" }) == refunds, "\(date)")
            }
        }
    }

    @Test func theActiveCountsAreTheTimelinesAtTheEndOfTheDay() async throws {
        try await withReports { server, client in
            let date = "2026-11-20"
            let rows = ReportClient.rows(try await client.text(path(client, "SUBSCRIPTION", date)))
            let at = Truth.endOfPacificDay(date) - 1
            var active: [String: Int] = [:]
            var retry: [String: Int] = [:]
            let pop = server.population
            let served = pop.families.filter { !$0.sandbox && $0.bundleId == pop.bundleId && $0.fixedStatus != 21010 }
            for plan in (served + pop.lostOrders).flatMap(\.subscriptions) where !plan.familyShared {
                let timeline = plan.timeline(at: at)
                guard let last = timeline.transactions.last else { continue }
                let id = pop.catalog.appleId(of: last.product)
                if last.purchase <= at, at < last.expires, last.cancellation.map({ $0 > at }) ?? true {
                    active[id, default: 0] += 1
                } else if at >= last.expires, timeline.inBillingRetry || timeline.gracePeriodExpires != nil {
                    retry[id, default: 0] += 1
                }
            }
            var servedActive: [String: Int] = [:]
            var servedRetry: [String: Int] = [:]
            for row in rows {
                let id = row["Subscription Apple ID"] ?? "?"
                let counts = SubscriptionReport.counts.enumerated().filter { ![10, 11, 12, 13].contains($0.offset) }
                let sum = counts.map { Int(row[$0.element] ?? "") ?? -1000 }.reduce(0, +)
                if sum > 0 { servedActive[id, default: 0] += sum }
                let stalled = (Int(row["Billing Retry"] ?? "") ?? -1000) + (Int(row["Grace Period"] ?? "") ?? -1000)
                if stalled > 0 { servedRetry[id, default: 0] += stalled }
                #expect((Int(row["Subscribers"] ?? "") ?? 0) >= 1, "\(row)")
            }
            #expect(active.values.reduce(0, +) > 100)
            #expect(servedActive == active)
            #expect(servedRetry == retry)
        }
    }

    @Test func anUnknownCombinationIsApplesParameterError() async throws {
        try await withReports { _, client in
            let detailed = client.subscriberPath("2026-11-20", ["reportType": "SUBSCRIPTION"])
            let error = ReportClient.error(try await client.get(detailed))
            #expect(error?.status == "400" && error?.code == "PARAMETER_ERROR.INVALID", "\(String(describing: error))")
            #expect(error?.parameter == "filter[reportSubType]")
            let early = ReportClient.error(try await client.get(path(client, "SUBSCRIPTION", "2026-11-30")))
            #expect(early?.code == "NOT_FOUND" && early?.detail.contains("not available yet") == true)
        }
    }
}
