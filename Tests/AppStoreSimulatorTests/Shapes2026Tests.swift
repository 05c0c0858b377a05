import Foundation
import Testing

@testable import AppStoreSimulator

/// The 2026 shapes (docs/simulator.md, "2026 shapes"): what the population holds, what the Server API signs, and
/// that the truth files say the same. The payloads are read as JSON, as Apple documents them.
@Suite struct Shapes2026Tests {
    static let now = PopulationTests.now

    static func served(_ pop: Population) -> [(ReceiptFamily, SubscriptionPlan)] {
        pop.families.filter { !$0.sandbox && $0.bundleId == pop.bundleId && $0.fixedStatus != 21010 }
            .flatMap { f in f.subscriptions.map { (f, $0) } }
    }

    @Test(arguments: [21, 42] as [UInt64])
    func populationHoldsEveryShapeAndIsDeterministic(seed: UInt64) throws {
        let pop = Population(seed: seed, subscriptions: 1000, anchor: Self.now)
        let again = Population(seed: seed, subscriptions: 1000, anchor: Self.now)
        let plans = Self.served(pop).map(\.1)
        #expect(plans.contains { $0.promotionalOffer != nil })
        #expect(plans.contains { $0.winBack != nil })
        #expect(plans.contains { $0.commitmentMonths == 12 })
        #expect(plans.contains { $0.extensions.contains { $0.requestIdentifier == nil } })
        #expect(plans.contains { $0.priceIncrease.map { $0.effectiveAt > Self.now && $0.consentedAt != nil } == true })
        #expect(plans.contains { $0.refundRequests.contains { $0.declinedAt != nil } })
        let mass = try #require(pop.massExtensions.first)
        #expect(!mass.succeeded.isEmpty && mass.completedAt < Self.now)
        #expect(Set(pop.oneTimePurchases.map(\.kind)) == [.consumable, .nonConsumable])
        #expect(pop.oneTimePurchases.contains { $0.refundedAt != nil })
        #expect(pop.notices.contains { $0.kind == .rescindConsent } && pop.notices.contains { $0.kind == .futureType })
        // One-time ids are never a subscription's.
        let subscriptionIds = Set(plans.flatMap { p in p.timeline(at: Self.now).transactions.map(\.transactionId) })
        #expect(pop.oneTimePurchases.allSatisfy { !subscriptionIds.contains($0.transactionId) })
        // Same seed, same world.
        #expect(pop.oneTimePurchases.map(\.transactionId) == again.oneTimePurchases.map(\.transactionId))
        #expect(pop.oneTimePurchases.map(\.purchase) == again.oneTimePurchases.map(\.purchase))
        #expect(mass.requestIdentifier == again.massExtensions.first?.requestIdentifier)
        #expect(
            pop.families.map { AppAccountToken.of(seed: seed, family: $0) }
                == again.families.map {
                    AppAccountToken.of(seed: seed, family: $0)
                }
        )
        let tokens = pop.families.map { AppAccountToken.of(seed: seed, family: $0) }
        #expect(tokens.contains(nil) && tokens.compactMap { $0 }.count > pop.families.count / 2)
    }

    @Test func newScenariosHoldAndAnIndividualExtensionMovesTheExpiry() throws {
        let pop = Population(seed: 42, subscriptions: 1000, anchor: Self.now)
        for (family, plan) in Self.served(pop) {
            let tl = plan.timeline(at: Self.now)
            if family.scenario == .priceIncreaseLapsed {
                #expect(tl.stop == .priceIncreaseDeclined && tl.expirationIntent == 3 && !tl.autoRenewStatus)
                let types = NotificationHistory.events(family: family, planIndex: 0, now: Self.now).map {
                    "\($0.type)/\($0.subtype ?? "")"
                }
                #expect(types.contains("PRICE_INCREASE/PENDING") && types.contains("EXPIRED/PRICE_INCREASE"))
            }
            if family.scenario == .winBack, let back = plan.winBack {
                let first = try #require(tl.transactions.first { $0.purchase == back.at })
                #expect(first.offer?.type == 4 && first.offer?.identifier == back.offerIdentifier)
                #expect(tl.autoRenewStatus && tl.transactions.last.map { $0.expires > Self.now } == true)
            }
            if let ext = plan.extensions.first {
                var without = plan
                without.extensions = []
                let before = try #require(without.timeline(at: Self.now).transactions.last)
                let after = try #require(tl.transactions.last)
                #expect(after.expires == before.expires + ext.days * SimTime.day)
            }
        }
    }
}

extension Shapes2026Tests {
    static func status(_ client: ServerAPIClient, _ id: UInt64) async throws -> ([String: Any], [String: Any], Int) {
        let r = try await client.get("/inApps/v1/subscriptions/\(id)")
        let data = try #require(r.json?["data"] as? [[String: Any]])
        for group in data {
            for last in group["lastTransactions"] as? [[String: Any]] ?? []
            where last["originalTransactionId"] as? String == String(id) {
                let t = try await client.verifier.verify(try #require(last["signedTransactionInfo"] as? String))
                let r = try await client.verifier.verify(try #require(last["signedRenewalInfo"] as? String))
                return (t, r, (last["status"] as? NSNumber)?.intValue ?? 0)
            }
        }
        throw CancellationError()
    }

    static func history(_ client: ServerAPIClient, _ id: UInt64) async throws -> [[String: Any]] {
        var out: [[String: Any]] = []
        var revision: String?
        while true {
            let r = try await client.get("/inApps/v2/history/\(id)" + (revision.map { "?revision=" + $0 } ?? ""))
            let json = try #require(r.json)
            for jws in json["signedTransactions"] as? [String] ?? [] {
                out.append(try await client.verifier.verify(jws))
            }
            revision = json["revision"] as? String
            guard json["hasMore"] as? Bool == true else { return out }
        }
    }

    static func int(_ v: Any?) -> Int64? { (v as? NSNumber)?.int64Value }

    @Test func servedTransactionsAndRenewalInfoCarryThe2026Fields() async throws {
        try await withSimulator(seed: 42, subscriptions: 1000, configure: { $0.serverAPILimits = .unlimited }) {
            server in
            let client = try await ServerAPIClient.connect(to: server)
            let pop = server.population
            let renderer = server.serverAPI.renderer
            for (family, plan) in Self.served(pop).prefix(400) {
                let (t, r, status) = try await Self.status(client, plan.originalTransactionId)
                let token = AppAccountToken.of(seed: pop.seed, family: family)
                #expect(t["appAccountToken"] as? String == token && r["appAccountToken"] as? String == token)
                let truth = RenewalTruth(renderer: renderer, family: family, plan: plan, now: Self.now)
                #expect(Self.int(r["renewalPrice"]) == truth.renewalPrice)
                #expect(Self.int(r["expirationIntent"]).map(Int.init) == truth.expirationIntent)
                #expect(Self.int(r["priceIncreaseStatus"]).map(Int.init) == truth.priceIncreaseStatus)
                if plan.commitmentMonths != nil {
                    #expect(t["billingPlanType"] as? String == "MONTHLY")
                    let info = try #require(t["commitmentInfo"] as? [String: Any])
                    #expect(Self.int(info["totalBillingPeriods"]) == 12 && Self.int(info["billingPeriodNumber"]) != nil)
                    #expect(r["renewalBillingPlanType"] as? String == "MONTHLY")
                } else {
                    #expect(t["billingPlanType"] == nil && r["renewalBillingPlanType"] == nil)
                }
                if family.scenario == .priceIncreaseLapsed {
                    #expect(
                        status == 2 && Self.int(r["expirationIntent"]) == 3 && Self.int(r["priceIncreaseStatus"]) == 0
                    )
                }
                guard plan.promotionalOffer != nil || plan.winBack != nil else { continue }
                let offered = try await Self.history(client, plan.originalTransactionId).filter {
                    [2, 4].contains(Self.int($0["offerType"]))
                }
                #expect(!offered.isEmpty)
                for o in offered {
                    #expect(o["offerDiscountType"] as? String == "PAY_AS_YOU_GO")
                    #expect((o["offerPeriod"] as? String)?.hasPrefix("P") == true && o["offerIdentifier"] is String)
                }
            }
            await client.close()
        }
    }

    @Test func oneTimePurchasesAreServedApartFromSubscriptions() async throws {
        try await withSimulator(seed: 42, subscriptions: 600, configure: { $0.serverAPILimits = .unlimited }) {
            server in
            let client = try await ServerAPIClient.connect(to: server)
            let items = server.population.oneTimePurchases.filter { $0.purchase <= Self.now }.prefix(6)
            #expect(!items.isEmpty)
            for item in items {
                let r = try await client.get("/inApps/v1/transactions/\(item.transactionId)")
                let t = try await client.verifier.verify(try #require(r.json?["signedTransactionInfo"] as? String))
                #expect(t["type"] as? String == item.kind.rawValue && t["expiresDate"] == nil)
                #expect(t["originalTransactionId"] as? String == String(item.transactionId))
                #expect(t["price"] != nil && t["currency"] != nil && t["storefront"] != nil)
                #expect((t["revocationType"] as? String == "REFUND_FULL") == item.isRefunded(at: Self.now))
                let history = try await Self.history(client, item.transactionId)
                #expect(history.allSatisfy { $0["type"] as? String == "Auto-Renewable Subscription" })
                let statuses = try await client.get("/inApps/v1/subscriptions/\(item.transactionId)")
                #expect(statuses.status == 200)
            }
            await client.close()
        }
    }
}

extension Shapes2026Tests {
    /// verifyReceipt's own spellings of what it has: `app_account_token` on every entry of a family that set one,
    /// `promotional_offer_id` on promotional-offer transactions.
    @Test func verifyReceiptCarriesTheAccountTokenAndPromotionalOfferId() throws {
        let pop = Population(seed: 42, subscriptions: 1000, anchor: Self.now)
        let renderer = ResponseRenderer(population: pop)
        var sawPromo = false
        for (family, plan) in Self.served(pop) where plan.promotionalOffer != nil || family.index % 50 == 0 {
            let token = ReceiptToken(
                familyIndex: UInt32(family.index),
                originalTransactionId: family.primaryOriginalTransactionId,
                sandbox: family.sandbox,
                createdAt: Self.now - 1000,
                issueSequence: 1
            )
            let body = renderer.renderSuccess(family: family, token: token, now: Self.now, excludeOld: false)
            let json = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
            let latest = try #require(json["latest_receipt_info"] as? [[String: Any]])
            let expected = AppAccountToken.of(seed: pop.seed, family: family)
            #expect(latest.allSatisfy { $0["app_account_token"] as? String == expected })
            let promos = latest.filter { $0["promotional_offer_id"] != nil }
            if plan.promotionalOffer != nil,
                plan.timeline(at: Self.now).transactions.contains(where: { $0.offer?.type == 2 })
            {
                #expect(
                    promos.allSatisfy { $0["promotional_offer_id"] as? String == "RETAIN_HALF_OFF" } && !promos.isEmpty
                )
                sawPromo = true
            }
        }
        #expect(sawPromo)
    }

    /// Get Refund History lists every refunded in-app purchase of the customer, one-time purchases included.
    @Test func refundHistoryListsRefundedOneTimePurchases() async throws {
        try await withSimulator(seed: 42, subscriptions: 600, configure: { $0.serverAPILimits = .unlimited }) {
            server in
            let client = try await ServerAPIClient.connect(to: server)
            let refunded = server.population.oneTimePurchases.filter { $0.isRefunded(at: Self.now) }.prefix(4)
            #expect(!refunded.isEmpty)
            for item in refunded {
                let r = try await client.get("/inApps/v2/refund/lookup/\(item.transactionId)")
                var ids: [String] = []
                for jws in r.json?["signedTransactions"] as? [String] ?? [] {
                    ids.append(try await client.verifier.verify(jws)["transactionId"] as? String ?? "")
                }
                #expect(ids.contains(String(item.transactionId)))
            }
            await client.close()
        }
    }
}
