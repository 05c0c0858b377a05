import Foundation
import Testing
@testable import AppStoreSimulator

/// Reads a JSONL file into objects.
func readJSONLines(_ path: String) throws -> [[String: Any]] {
    let text = try String(contentsOfFile: path, encoding: .utf8)
    return try text.split(separator: "\n").map { line in
        try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }
}

func temporaryDirectory(_ name: String) -> String {
    let dir = NSTemporaryDirectory() + "appstore-sim-tests-\(name)-\(UUID().uuidString)"
    return dir
}

@Suite struct PopulationTests {
    static let now = SimTime.parseRFC3339("2026-11-21T03:00:00Z")!

    static let expectedStates: [Scenario: Set<String>] = [
        .activeNotRenewed: ["active"], .silentRenewal: ["active"], .autoRenewOffExpired: ["expired"],
        .expiredLongAgo: ["expired"], .billingRetry: ["billing_retry"], .gracePeriod: ["grace_period"],
        .refundedOther: ["revoked"], .refundedAppIssue: ["revoked"], .olderPeriodRefunded: ["active"],
        .upgraded: ["active"], .pendingDowngrade: ["active"], .pendingCrossgrade: ["active"], .freeTrial: ["active"],
        .introOffer: ["active"], .familyShared: ["active"], .sandbox: ["active", "expired"],
        .multiGroup: ["active", "expired"], .foreignApp: ["active"], .longHistory: ["active"],
    ]

    @Test(arguments: [1, 2, 3, 42, 9001] as [UInt64])
    func everyScenarioHoldsAtTheAnchor(seed: UInt64) throws {
        let pop = Population(seed: seed, subscriptions: 600, anchor: Self.now)
        #expect(pop.subscriptionCount == 600)
        var seen: Set<Scenario> = []
        for family in pop.families {
            seen.insert(family.scenario)
            for plan in family.subscriptions {
                let truth = TruthRecord(family: family, plan: plan, at: Self.now)
                switch family.scenario {
                case .unauthenticatable: #expect(truth.appleStatus == 21003 && truth.state == nil)
                case .deletedAccount: #expect(truth.appleStatus == 21010 && truth.state == nil)
                case .malformedReceipt: #expect(truth.appleStatus == 21002 && truth.transactionCount == nil)
                default:
                    let expected = try #require(Self.expectedStates[family.scenario])
                    #expect(truth.appleStatus == 0)
                    #expect(expected.contains(truth.state ?? "nil"),
                            "seed \(seed) family \(family.index) \(family.scenario): \(truth.state ?? "nil")")
                }
                let tl = plan.timeline(at: Self.now)
                switch family.scenario {
                case .upgraded:
                    #expect(tl.transactions.contains { $0.isUpgraded && $0.cancellation != nil })
                    #expect(truth.productID?.hasSuffix(".pro.plus.monthly") == true)
                case .pendingDowngrade, .pendingCrossgrade:
                    #expect(truth.autoRenewProductID != truth.productID)
                case .refundedOther, .refundedAppIssue:
                    let reason = family.scenario == .refundedOther ? 0 : 1
                    #expect(tl.transactions.contains { $0.isRefunded && $0.cancellationReason == reason })
                    #expect(truth.revokedAt != nil)
                case .olderPeriodRefunded:
                    #expect(tl.transactions.contains { $0.isRefunded })
                case .freeTrial:
                    #expect(tl.transactions.first?.isTrial == true)
                case .introOffer:
                    #expect(tl.transactions.contains { $0.isIntro })
                case .familyShared:
                    #expect(tl.transactions.allSatisfy { $0.familyShared })
                case .gracePeriod:
                    #expect(truth.gracePeriodExpiresAt.map { $0 > Self.now } == true)
                case .billingRetry:
                    #expect(tl.inBillingRetry && truth.gracePeriodExpiresAt == nil)
                case .sandbox:
                    #expect(tl.transactions.count <= 7)
                    #expect(tl.transactions.allSatisfy { $0.expires - $0.purchase <= 5 * SimTime.minute })
                case .silentRenewal:
                    let stored = plan.timeline(at: family.storedReceiptAt).transactions.count
                    #expect(stored < tl.transactions.count, "silent renewal must have renewals after the stored receipt")
                default: break
                }
            }
            if family.scenario == .multiGroup {
                #expect(family.subscriptions.count == 2)
                #expect(Set(family.subscriptions.map(\.product.groupID)).count == 2)
            }
            if family.scenario == .foreignApp { #expect(family.bundleID != pop.bundleID) }
        }
        #expect(seen == Set(Scenario.allCases), "missing: \(Set(Scenario.allCases).subtracting(seen))")
    }

    @Test func smallPopulationsCoverEveryScenarioAndCountIsExact() {
        let pop = Population(seed: 5, subscriptions: 30, anchor: Self.now)
        #expect(pop.subscriptionCount == 30)
        #expect(Set(pop.families.map(\.scenario)) == Set(Scenario.allCases))
        #expect(Population(seed: 5, subscriptions: 0, anchor: Self.now).families.isEmpty)
    }

    @Test func exportIsByteIdenticalForTheSameSeedAndDiffersForAnother() throws {
        let a = temporaryDirectory("a"), b = temporaryDirectory("b"), c = temporaryDirectory("c")
        defer { for d in [a, b, c] { try? FileManager.default.removeItem(atPath: d) } }
        let pop = { (seed: UInt64) in Population(seed: seed, subscriptions: 250, anchor: Self.now) }
        _ = try PopulationExporter(population: pop(11)).export(to: a, now: Self.now)
        _ = try PopulationExporter(population: pop(11)).export(to: b, now: Self.now)
        _ = try PopulationExporter(population: pop(12)).export(to: c, now: Self.now)
        for file in ["purchases.jsonl", "truth.jsonl"] {
            let x = try #require(FileManager.default.contents(atPath: a + "/" + file))
            let y = try #require(FileManager.default.contents(atPath: b + "/" + file))
            let z = try #require(FileManager.default.contents(atPath: c + "/" + file))
            #expect(x.count > 1000)
            #expect(x == y, "\(file) differs between two exports of the same seed")
            #expect(x != z, "\(file) is the same for different seeds")
        }
    }

    @Test func exportedRowsHaveTheDocumentedKeysAndFormats() throws {
        let dir = temporaryDirectory("keys")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let pop = Population(seed: 3, subscriptions: 400, anchor: Self.now)
        let summary = try PopulationExporter(population: pop).export(to: dir, now: Self.now)
        #expect(summary.total == 400)
        let purchases = try readJSONLines(dir + "/purchases.jsonl")
        let truth = try readJSONLines(dir + "/truth.jsonl")
        #expect(purchases.count == 400 && truth.count == 400)
        let purchaseKeys: Set = ["user_id", "product_id", "original_transaction_id", "latest_receipt", "expires_at",
                                 "environment", "bundle_id"]
        let truthKeys: Set = ["original_transaction_id", "scenario", "environment", "bundle_id", "apple_status", "state",
                              "expires_at", "product_id", "auto_renew", "auto_renew_product_id",
                              "grace_period_expires_at", "transaction_count", "revoked_at"]
        for row in purchases {
            #expect(Set(row.keys) == purchaseKeys)
            let expires = try #require(row["expires_at"] as? String)
            #expect(expires.hasSuffix("Z") && SimTime.parseRFC3339(expires) != nil)
            #expect(["Production", "Sandbox"].contains(row["environment"] as? String ?? ""))
        }
        for row in truth { #expect(Set(row.keys) == truthKeys) }
        #expect(Set(purchases.compactMap { $0["original_transaction_id"] as? String }).count == 400)
        // Long histories are over 100 KB; ordinary receipts a few KB.
        let longOTIDs = Set(truth.filter { $0["scenario"] as? String == "long_history" }
            .compactMap { $0["original_transaction_id"] as? String })
        #expect(!longOTIDs.isEmpty)
        for row in purchases where longOTIDs.contains(row["original_transaction_id"] as? String ?? "") {
            #expect((row["latest_receipt"] as? String ?? "").utf8.count > 100_000)
        }
        // Multi-group families: both rows carry the same receipt.
        let multi = Set(truth.filter { $0["scenario"] as? String == "multi_group" }
            .compactMap { $0["original_transaction_id"] as? String })
        let multiRows = purchases.filter { multi.contains($0["original_transaction_id"] as? String ?? "") }
        let byUser = Dictionary(grouping: multiRows) { $0["user_id"] as? String ?? "" }
        #expect(!byUser.isEmpty && byUser.values.allSatisfy { $0.count == 2 })
        for rows in byUser.values {
            #expect(rows[0]["latest_receipt"] as? String == rows[1]["latest_receipt"] as? String)
        }
    }

    @Test func receiptsRoundTripAndTamperingIsDetected() throws {
        let pop = Population(seed: 8, subscriptions: 50, anchor: Self.now)
        let renderer = ResponseRenderer(population: pop)
        let family = try #require(pop.families.first { $0.scenario == .silentRenewal })
        let receipt = renderer.receipt(family, createdAt: family.storedReceiptAt, issueSequence: 4)
        guard case .valid(let token) = renderer.codec.decode(receipt) else {
            Issue.record("own receipt did not decode")
            return
        }
        #expect(token.familyIndex == UInt32(family.index) && token.issueSequence == 4)
        #expect(token.createdAt == family.storedReceiptAt)
        var tampered = receipt
        tampered[100] = tampered[100] == 65 ? 66 : 65
        #expect(renderer.codec.decode(tampered) == .unauthenticated)
        #expect(ReceiptCodec(seed: 9).decode(receipt) == .unauthenticated)
        #expect(renderer.codec.decode(Array("not base64!".utf8)) == .malformed)
        #expect(renderer.codec.decode(Array("aGVsbG8gd29ybGQ=".utf8)) == .malformed)
    }
}
