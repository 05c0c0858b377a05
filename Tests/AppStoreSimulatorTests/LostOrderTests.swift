import Foundation
import TestSupport
import Testing

@testable import AppStoreSimulator

/// Lost orders (docs/simulator.md, "Lost orders"): customers whose purchases Apple reports and the app's database never
/// received. They move nothing else of the world, the app's files never name them, and the Subscriber report of a
/// day holds their sales beside everyone else's.
@Suite struct LostOrderTests {
    static let now = ReportEndpointTests.now

    @Test func lostOrdersLeaveThePopulationsOwnFamiliesAsTheyWere() {
        let plain = Population(seed: 5, subscriptions: 400, anchor: PopulationTests.now)
        let lost = Population(seed: 5, subscriptions: 400, anchor: PopulationTests.now, lostOrders: 12)
        #expect(plain.lostOrders.isEmpty)
        #expect(lost.lostOrders.count == 12)
        #expect(lost.families.map(\.index) == plain.families.map(\.index))
        #expect(
            lost.families.flatMap { $0.subscriptions.map(\.originalTransactionId) }
                == plain.families.flatMap { $0.subscriptions.map(\.originalTransactionId) }
        )
        let known = Set(lost.families.flatMap { $0.subscriptions.map(\.originalTransactionId) })
        for family in lost.lostOrders {
            #expect(!family.sandbox && family.bundleId == lost.bundleId && family.fixedStatus == nil)
            #expect(family.subscriptions.count == 1)
            #expect(family.subscriptions.allSatisfy { !known.contains($0.originalTransactionId) })
            #expect(!family.subscriptions[0].timeline(at: PopulationTests.now).transactions.isEmpty)
        }
    }

    @Test func exportListsThemApartAndTheAppsFilesNeverNameThem() throws {
        let pop = Population(seed: 6, subscriptions: 300, anchor: PopulationTests.now, lostOrders: 7)
        let dir = temporaryDirectory("lost")
        let none = temporaryDirectory("none")
        defer { for d in [dir, none] { try? FileManager.default.removeItem(atPath: d) } }
        _ = try PopulationExporter(population: pop).export(to: dir, now: Self.now)
        let lines = try String(contentsOfFile: dir + "/server-api/lost-orders.jsonl", encoding: .utf8)
            .split(separator: "\n")
        let lostIds = pop.lostOrders.map { String($0.subscriptions[0].originalTransactionId) }
        #expect(lines.count == 7)
        for (line, id) in zip(lines, lostIds) { #expect(line.contains("\"original_transaction_id\":\"\(id)\"")) }
        for file in ["purchases.jsonl", "truth.jsonl", "server-api/ledger.jsonl"] {
            let text = try String(contentsOfFile: dir + "/" + file, encoding: .utf8)
            #expect(lostIds.allSatisfy { !text.contains($0) }, "\(file)")
        }
        _ = try PopulationExporter(population: Population(seed: 6, subscriptions: 300, anchor: PopulationTests.now))
            .export(to: none, now: Self.now)
        #expect(!FileManager.default.fileExists(atPath: none + "/server-api/lost-orders.jsonl"))
    }

    @Test func aDaysSubscriberReportHoldsTheLostOrdersSales() async throws {
        try await withSimulator(
            subscriptions: 600,
            now: Self.now,
            configure: {
                $0.anchor = PopulationTests.now
                $0.lostOrders = 40
            }
        ) { server in
            let pop = server.population
            let client = ReportClient(server)
            let november = SimTime.parseRFC3339("2026-11-01T12:00:00Z")!
            let sale = try #require(
                pop.lostOrders.flatMap { $0.subscriptions[0].timeline(at: Self.now).transactions }
                    .first { $0.purchase > november && $0.purchase < PopulationTests.now }
            )
            let date = SubscriberReportTruth.pacificDate(sale.purchase)
            let served = ReportClient.rows(try await client.text(client.subscriberPath(date)))
                .map(SubscriberReportTruth.key).sorted()
            let expected = SubscriberReportTruth.expectedKeys(pop, date: date)
            #expect(served == expected)
            let family = try #require(
                pop.lostOrders.first {
                    $0.subscriptions[0].timeline(at: Self.now).transactions.contains {
                        $0.transactionId == sale.transactionId
                    }
                }
            )
            let storefront = Storefront.of(seed: pop.seed, familyIndex: family.index)
            let key = [
                pop.catalog.appleId(of: sale.product),
                storefront.decimal(storefront.price(of: sale, anchor: pop.anchor)),
                storefront.currency, storefront.country, "", "1",
            ].joined(separator: "|")
            #expect(served.contains(key))
        }
    }
}
