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
        .multiGroup: ["active", "expired"], .longHistory: ["active"],
        .upgradeWithoutCancellation: ["active", "expired"], .refundThenResubscribe: ["active"],
        .refundThenResubscribeRevokedRow: ["active"], .appStoredLaterExpiry: ["expired"], .refundReversed: ["active"],
        .winBack: ["active"], .priceIncreaseLapsed: ["expired"],
    ]
    /// Scenarios whose answer must be refused, with Apple's status (0: an out-of-bounds value or another app).
    static let rejectedStatus: [Scenario: Int] = [
        .unauthenticatable: 21003, .malformedReceipt: 21002, .foreignSecretReceipt: 21004, .foreignApp: 0,
        .absurdDate: 0, .nearInt64Max: 0, .nulInText: 0,
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
                let stored = family.storedRow(plan)
                #expect(truth.storedExpiresAt == stored.expires && truth.storedProductId == stored.productId)
                if let status = Self.rejectedStatus[family.scenario] {
                    #expect(truth.appleStatus == status && truth.expect == .rejected)
                    #expect(truth.state == nil && truth.expiresAt == nil && truth.transactionCount == nil)
                } else if family.scenario == .deletedAccount || family.scenario == .deletedAccountActive {
                    #expect(truth.appleStatus == 21010 && truth.expect == .entitlementEnded)
                    #expect(truth.state == "expired" && truth.autoRenew == false && truth.transactionCount == 0)
                    #expect(truth.expiresAt == stored.expires && truth.expiresAtRule == TruthRecord.notAfterRun)
                    #expect(truth.productId == stored.productId)
                } else if family.scenario.seenOnlyThroughNotifications {
                    // verifyReceipt cannot see the change: the row keeps what last night's run left.
                    let prior = try #require(truth.priorRun)
                    #expect(truth.expect == .notDue && prior.state == "active")
                    #expect((prior.expiresAt ?? 0) > Self.now + 180 * SimTime.day)
                    #expect(prior.verifiedAt < Self.now && prior.verifiedAt > Self.now - 6 * SimTime.day)
                    let view = try #require(truth.serverAPI, "the Server API view differs")
                    #expect(view.expect == .decision)
                    #expect(view.state == truth.state && view.expiresAt == truth.expiresAt)
                    if family.scenario == .midPeriodRefund {
                        #expect(truth.state == "revoked" && truth.revokedAt.map { $0 > prior.verifiedAt } == true)
                        #expect((truth.expiresAt ?? .max) < (prior.expiresAt ?? 0), "the refund moves the expiry back")
                    } else {
                        #expect(truth.state == "active" && truth.autoRenew == false)
                        #expect(truth.expiresAt == prior.expiresAt)
                    }
                } else {
                    let expected = try #require(Self.expectedStates[family.scenario])
                    #expect(truth.appleStatus == 0 && truth.expect == .decision && truth.expiresAtRule == nil)
                    #expect(
                        expected.contains(truth.state ?? "nil"),
                        "seed \(seed) family \(family.index) \(family.scenario): \(truth.state ?? "nil")"
                    )
                }
                #expect(
                    (truth.priorRun != nil)
                        == (family.scenario == .refundThenResubscribeRevokedRow || family.scenario == .refundReversed
                            || family.scenario.seenOnlyThroughNotifications)
                )
                #expect(
                    (family.implausibleValue != nil)
                        == [.absurdDate, .nearInt64Max, .nulInText].contains(family.scenario)
                )
                let tl = plan.timeline(at: Self.now)
                switch family.scenario {
                case .upgraded:
                    #expect(tl.transactions.contains { $0.isUpgraded && $0.cancellation != nil })
                    #expect(truth.productId?.hasSuffix(".pro.plus.monthly") == true)
                case .pendingDowngrade, .pendingCrossgrade:
                    #expect(truth.autoRenewProductId != truth.productId)
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
                case .deletedAccountActive:
                    #expect(truth.storedExpiresAt > Self.now, "the app stored an active row")
                case .upgradeWithoutCancellation:
                    let replaced = try #require(tl.transactions.first { $0.isUpgraded })
                    #expect(replaced.cancellation == nil && replaced.product.productId.hasSuffix(".pro.yearly"))
                    #expect(truth.productId?.hasSuffix(".pro.plus.monthly") == true)
                    // The replaced yearly would run longer: keeping it would be the bug this scenario catches.
                    #expect(replaced.expires > (truth.expiresAt ?? .max))
                    #expect(truth.storedExpiresAt > (truth.expiresAt ?? .max), "the row's expiry must move back")
                case .refundThenResubscribe, .refundThenResubscribeRevokedRow:
                    let refunded = try #require(tl.transactions.first { $0.isRefunded })
                    let refundAt = try #require(refunded.cancellation)
                    #expect(refunded.product.productId.hasSuffix(".pro.yearly"))
                    #expect(refunded.expires > (truth.expiresAt ?? .max), "the refund expires after the monthly")
                    let monthly = tl.transactions.filter { $0.product.productId.hasSuffix(".pro.monthly") }
                    #expect(!monthly.isEmpty && monthly.allSatisfy { $0.purchase > refundAt && !$0.isRefunded })
                    #expect(truth.productId?.hasSuffix(".pro.monthly") == true && truth.revokedAt == nil)
                    #expect(truth.storedProductId.hasSuffix(".pro.yearly"))
                    if let prior = truth.priorRun {
                        #expect(prior.state == "revoked" && prior.revokedAt == refundAt)
                        #expect(prior.verifiedAt > refundAt && prior.verifiedAt < monthly[0].purchase)
                        // Within the nightly window (60 days back), so a re-scan of revoked rows can find it.
                        let priorExpiry = try #require(prior.expiresAt)
                        #expect(priorExpiry <= prior.verifiedAt && priorExpiry > Self.now - 60 * SimTime.day)
                    }
                case .refundReversed:
                    // No refund at the anchor; the previous night saw the row revoked; both notifications sent.
                    #expect(tl.transactions.allSatisfy { !$0.isRefunded } && truth.revokedAt == nil)
                    #expect(truth.priorRun?.state == "revoked")
                    let types = NotificationHistory.events(family: family, planIndex: 0, now: Self.now).map(\.type)
                    #expect(types.contains("REFUND_REVERSED") && types.contains("REFUND"), "\(types)")
                case .appStoredLaterExpiry:
                    #expect(truth.storedExpiresAt > Self.now && (truth.expiresAt ?? .max) < Self.now)
                    #expect(truth.storedProductId == truth.productId)
                case .silentRenewal:
                    let stored = plan.timeline(at: family.storedReceiptAt).transactions.count
                    #expect(
                        stored < tl.transactions.count,
                        "silent renewal must have renewals after the stored receipt"
                    )
                default: break
                }
            }
            if family.scenario == .multiGroup {
                #expect(family.subscriptions.count == 2)
                #expect(Set(family.subscriptions.map(\.product.groupId)).count == 2)
            }
            if family.scenario == .foreignApp { #expect(family.bundleId != pop.bundleId) }
            #expect(family.appBundleId == pop.bundleId)
        }
        #expect(seen == Set(Scenario.allCases), "missing: \(Set(Scenario.allCases).subtracting(seen))")
    }

    @Test func weightsArePartsOf200AndEveryScenarioHasOne() {
        #expect(Scenario.allCases.reduce(0) { $0 + $1.weight } == 200)
        #expect(Scenario.allCases.allSatisfy { $0.weight >= 1 })
        #expect(Set(Scenario.allCases.map(\.rawValue)).count == Scenario.allCases.count)
    }

    @Test func smallPopulationsCoverEveryScenarioAndCountIsExact() {
        // The 2026 scenarios take silent-renewal slots after the first cycle's head (one of each older scenario).
        let older = Set(Scenario.allCases).subtracting(Scenario.takesSilentRenewalSlots)
        let pop = Population(seed: 5, subscriptions: 40, anchor: Self.now)
        #expect(pop.subscriptionCount == 40)
        #expect(Set(pop.families.map(\.scenario)).isSuperset(of: older))
        for seed in [5, 42, 9001] as [UInt64] {
            let bigger = Population(seed: seed, subscriptions: 120, anchor: Self.now)
            #expect(Set(bigger.families.map(\.scenario)) == Set(Scenario.allCases), "seed \(seed)")
        }
        #expect(Population(seed: 5, subscriptions: 0, anchor: Self.now).families.isEmpty)
    }

    @Test func exportIsByteIdenticalForTheSameSeedAndDiffersForAnother() throws {
        let a = temporaryDirectory("a")
        let b = temporaryDirectory("b")
        let c = temporaryDirectory("c")
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
        let purchaseKeys: Set = [
            "user_id", "product_id", "original_transaction_id", "latest_receipt", "expires_at",
            "environment", "bundle_id", "currency",
        ]
        let truthKeys: Set = [
            "original_transaction_id", "scenario", "environment", "bundle_id", "apple_status",
            "expect", "state", "expires_at", "product_id", "auto_renew", "auto_renew_product_id",
            "grace_period_expires_at", "transaction_count", "revoked_at", "stored_product_id",
            "stored_expires_at", "expires_at_rule", "server_api", "prior_run", "app_account_token",
            "app_transaction_id", "expiration_intent", "price_increase_status", "renewal_price", "renewal_currency",
            "renewal_billing_plan_type", "period_offers",
        ]
        for row in purchases {
            // `app_account_token` only on rows whose purchase carried one.
            #expect(Set(row.keys).subtracting(["app_account_token"]) == purchaseKeys)
            let expires = try #require(row["expires_at"] as? String)
            #expect(expires.hasSuffix("Z") && SimTime.parseRFC3339(expires) != nil)
            #expect(["Production", "Sandbox"].contains(row["environment"] as? String ?? ""))
            #expect(Storefront.all.map(\.currency).contains(row["currency"] as? String ?? ""))
        }
        // The price list: every product of the app in every storefront currency, at today's list and intro price,
        // which is what every production purchase since the price rise paid.
        let catalog = try String(contentsOfFile: dir + "/catalog.csv", encoding: .utf8)
            .split(separator: "\r\n").map {
                $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            }
        #expect(
            catalog.first == [
                "product_id", "currency", "price", "period", "intro_price", "subscription_group_id", "display_name",
            ]
        )
        #expect(catalog.count == 1 + 6 * Storefront.all.count)
        var listed: [String: (price: String, intro: String)] = [:]
        for row in catalog.dropFirst() { listed[row[0] + " " + row[1]] = (row[2], row[4]) }
        var checked = 0
        for line in try readJSONLines(dir + "/server-api/ledger.jsonl")
        where line["environment"] as? String == "Production" {
            let currency = try #require(line["currency"] as? String)
            let storefront = try #require(Storefront.all.first { $0.currency == currency })
            for t in line["transactions"] as? [[String: Any]] ?? [] {
                let purchase = try #require(SimTime.parseRFC3339(t["purchase_date"] as? String ?? ""))
                guard purchase >= pop.anchor - Storefront.priceRiseBefore, t["offer"] as? String != "free_trial",
                    let product = t["product_id"] as? String, product.hasPrefix(pop.bundleId + ".")
                else { continue }
                let price = storefront.decimal((t["price"] as? NSNumber)?.int64Value ?? -1)
                let row = try #require(listed[product + " " + currency], "\(product) \(currency)")
                #expect(price == (t["offer"] as? String == "pay_as_you_go" ? row.intro : row.price), "\(t)")
                checked += 1
            }
        }
        #expect(checked > 100)
        for row in truth { #expect(Set(row.keys) == truthKeys) }
        // The stored values in the truth are the purchases rows'.
        for (p, t) in zip(purchases, truth) {
            #expect(p["original_transaction_id"] as? String == t["original_transaction_id"] as? String)
            #expect(p["expires_at"] as? String == t["stored_expires_at"] as? String)
            #expect(p["product_id"] as? String == t["stored_product_id"] as? String)
        }
        let expects = Dictionary(grouping: truth) { $0["expect"] as? String ?? "?" }
        #expect(Set(expects.keys) == ["decision", "rejected", "entitlement_ended", "not_due"])
        for row in expects["not_due"] ?? [] {
            #expect((row["prior_run"] as? [String: Any])?["state"] as? String == "active")
            #expect((row["server_api"] as? [String: Any])?["expect"] as? String == "decision")
        }
        for row in expects["entitlement_ended"] ?? [] {
            #expect(row["expires_at_rule"] as? String == "not_after_run" && row["state"] as? String == "expired")
            #expect(row["expires_at"] as? String == row["stored_expires_at"] as? String)
        }
        let priors = truth.compactMap { $0["prior_run"] as? [String: Any] }
        #expect(!priors.isEmpty)
        for prior in priors {
            #expect(Set(prior.keys) == ["verified_at", "state", "expires_at", "product_id", "revoked_at"])
        }
        for row in truth {
            guard let prior = row["prior_run"] as? [String: Any] else { continue }
            // The revoked row was left revoked; the mid-period ones active.
            let scenario = row["scenario"] as? String ?? ""
            #expect(
                prior["state"] as? String == (scenario.hasPrefix("mid_period") ? "active" : "revoked"),
                "\(scenario)"
            )
        }
        #expect(Set(purchases.compactMap { $0["original_transaction_id"] as? String }).count == 400)
        // Long histories are over 100 KB; ordinary receipts a few KB.
        let longOTIDs = Set(
            truth.filter { $0["scenario"] as? String == "long_history" }
                .compactMap { $0["original_transaction_id"] as? String }
        )
        #expect(!longOTIDs.isEmpty)
        for row in purchases where longOTIDs.contains(row["original_transaction_id"] as? String ?? "") {
            #expect((row["latest_receipt"] as? String ?? "").utf8.count > 100_000)
        }
        // Multi-group families: both rows carry the same receipt.
        let multi = Set(
            truth.filter { $0["scenario"] as? String == "multi_group" }
                .compactMap { $0["original_transaction_id"] as? String }
        )
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
