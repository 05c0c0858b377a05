import Foundation
import Testing

@testable import AppStoreSimulator

/// The 2026 notifications as Get Notification History serves them, and `notifications-truth.json`.
@Suite struct Shapes2026NotificationTests {
    static let now = PopulationTests.now

    static func page(_ client: ServerAPIClient, type: String) async throws -> [[String: Any]] {
        let start = Self.now - 180 * SimTime.day
        let items = try await NotificationHistoryTests.pageAll(
            client,
            body: NotificationHistoryTests.body(
                start: start,
                end: Self.now + 1,
                extra: #","notificationType":"\#(type)""#
            )
        )
        return items.map(\.0)
    }

    @Test func newTypesAreSignedWithTheirDocumentedPayloadsAndMatchTheTruth() async throws {
        try await withSimulator(seed: 42, subscriptions: 1000, configure: { $0.serverAPILimits = .unlimited }) {
            server in
            let client = try await ServerAPIClient.connect(to: server)
            let dir = temporaryDirectory("n26")
            defer { try? FileManager.default.removeItem(atPath: dir) }
            _ = try PopulationExporter(population: server.population).export(to: dir, now: Self.now)
            let truthData = try #require(
                FileManager.default.contents(atPath: dir + "/server-api/notifications-truth.json")
            )
            let truth = try #require(try JSONSerialization.jsonObject(with: truthData) as? [String: Any])
            let counts = try #require(truth["counts"] as? [String: NSNumber])
            for type in [
                "CONSUMPTION_REQUEST", "REFUND_DECLINED", "RENEWAL_EXTENDED", "RENEWAL_EXTENSION", "ONE_TIME_CHARGE",
                "RESCIND_CONSENT", PopulationNotice.futureTypeName, "PRICE_INCREASE",
            ] {
                let served = try await Self.page(client, type: type)
                #expect(served.count == counts[type]?.intValue, "\(type)")
                #expect(!served.isEmpty, "\(type)")
                for payload in served {
                    let shape = ["data", "summary", "appData", PopulationNotice.futureTypeKey].filter {
                        payload[$0] != nil
                    }
                    #expect(shape.count == 1, "\(type): exactly one payload body, got \(shape)")
                    try await Self.check(payload, type: type, client: client)
                }
            }
            let requests = try #require(truth["refund_requests"] as? [[String: Any]])
            // `open` requests are rarer (about one in 200 subscriptions); the 10,000 of the default export have them.
            let outcomes = Set(requests.compactMap { $0["outcome"] as? String })
            #expect(
                outcomes.isSuperset(of: ["refunded", "declined"])
                    && outcomes.isSubset(of: ["refunded", "declined", "open"])
            )
            let mass = try #require((truth["mass_extensions"] as? [[String: Any]])?.first)
            #expect(
                (mass["succeeded_count"] as? NSNumber)?.intValue == server.population.massExtensions[0].succeeded.count
            )
            await client.close()
        }
    }

    static func check(_ payload: [String: Any], type: String, client: ServerAPIClient) async throws {
        switch type {
        case "RESCIND_CONSENT":
            let app = try #require(payload["appData"] as? [String: Any])
            #expect(
                app["bundleId"] is String && app["environment"] as? String == "Production" && app["appAppleId"] != nil
            )
            let info = try await client.verifier.verify(try #require(app["signedAppTransactionInfo"] as? String))
            #expect(info["appTransactionId"] is String)
        case PopulationNotice.futureTypeName:
            #expect(payload[PopulationNotice.futureTypeKey] is [String: Any])
        case "RENEWAL_EXTENSION" where payload["subtype"] as? String == "SUMMARY":
            let summary = try #require(payload["summary"] as? [String: Any])
            for key in [
                "requestIdentifier", "environment", "appAppleId", "bundleId", "productId", "storefrontCountryCodes",
                "succeededCount", "failedCount",
            ] {
                #expect(summary[key] != nil, "summary.\(key)")
            }
        case "ONE_TIME_CHARGE":
            let data = try #require(payload["data"] as? [String: Any])
            #expect(data["signedRenewalInfo"] == nil)
            let t = try await client.verifier.verify(try #require(data["signedTransactionInfo"] as? String))
            #expect(["Consumable", "Non-Consumable"].contains(t["type"] as? String ?? ""))
        case "CONSUMPTION_REQUEST":
            let data = try #require(payload["data"] as? [String: Any])
            #expect(data["consumptionRequestReason"] is String && data["signedTransactionInfo"] is String)
        case "PRICE_INCREASE":
            #expect(["PENDING", "ACCEPTED"].contains(payload["subtype"] as? String ?? ""))
        default:
            #expect(payload["data"] is [String: Any])
        }
    }

    @Test func newExportsAreByteIdenticalForTheSameSeedAndAddUp() throws {
        let a = temporaryDirectory("x26")
        let b = temporaryDirectory("y26")
        defer { for d in [a, b] { try? FileManager.default.removeItem(atPath: d) } }
        for dir in [a, b] {
            _ = try PopulationExporter(population: Population(seed: 9, subscriptions: 500, anchor: Self.now))
                .export(to: dir, now: Self.now)
        }
        for file in ["notifications-truth.json", "one-time-charges.jsonl", "ledger.jsonl", "revenue.json"] {
            let x = FileManager.default.contents(atPath: a + "/server-api/" + file)
            #expect(x != nil && x == FileManager.default.contents(atPath: b + "/server-api/" + file), "\(file)")
        }
        let charges = try readJSONLines(a + "/server-api/one-time-charges.jsonl")
        let revenueData = try #require(FileManager.default.contents(atPath: a + "/server-api/revenue.json"))
        let revenue = try #require(try JSONSerialization.jsonObject(with: revenueData) as? [String: Any])
        let oneTime = try #require(revenue["one_time"] as? [String: [String: NSNumber]])
        for (currency, figures) in oneTime {
            let mine = charges.filter { $0["currency"] as? String == currency }
            let gross = mine.reduce(Int64(0)) { $0 + (($1["price"] as? NSNumber)?.int64Value ?? 0) }
            let refunded = mine.filter { $0["refunded"] as? Bool == true }
                .reduce(Int64(0)) { $0 + (($1["price"] as? NSNumber)?.int64Value ?? 0) }
            #expect(figures["gross"]?.int64Value == gross && figures["refunded"]?.int64Value == refunded)
        }
        let ledger = try readJSONLines(a + "/server-api/ledger.jsonl")
        let keys = [
            "offer_type", "offer_identifier", "offer_period", "offer_discount_type", "billing_plan_type",
            "app_account_token", "ownership_type", "revocation_type",
        ]
        for line in ledger {
            for t in line["transactions"] as? [[String: Any]] ?? [] {
                #expect(keys.allSatisfy { t.keys.contains($0) })
            }
        }
    }
}
