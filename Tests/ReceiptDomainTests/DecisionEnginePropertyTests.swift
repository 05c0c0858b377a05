import Foundation
import Testing

@testable import ReceiptDomain

/// Properties that must hold for every (stored row, response, now): checked on thousands of random
/// cases from a seeded generator, so a failure is reproducible from its case number.
@Suite struct DecisionEnginePropertyTests {
    static let bundle = "com.example.reader"
    static let otid = "1000000811111111"
    static let nowMs: Int64 = 1_717_200_000_000
    static let day: Int64 = 86_400_000

    static func date(_ ms: Int64) -> Date { Date(timeIntervalSince1970: Double(ms) / 1000) }

    /// Offsets from now, with many ties (including exactly now) to hit boundaries.
    static func randomInstant(_ rng: inout SplitMix64) -> Int64 {
        let choices: [Int64] = [-400, -60, -30, -10, -1, 0, 1, 10, 30, 60, 365]
        let base = choices[Int.random(in: 0..<choices.count, using: &rng)] * day
        switch Int.random(in: 0..<4, using: &rng) {
        case 0: return nowMs + base
        case 1: return nowMs + base + Int64.random(in: -3...3, using: &rng)
        default: return nowMs + base + Int64.random(in: -day...day, using: &rng)
        }
    }

    struct Case {
        let stored: StoredSubscription
        let response: VerifyReceiptResponse
        let foreign: Bool
        let ours: [ReceiptTransaction]
    }

    static func randomCase(_ rng: inout SplitMix64) -> Case {
        let products = ["com.example.reader.monthly", "com.example.reader.yearly", "com.example.reader.premium"]
        var ours: [ReceiptTransaction] = []
        let count = Int.random(in: 0...6, using: &rng)
        for index in 0..<count {
            let expires = randomInstant(&rng)
            let purchase = expires - Int64.random(in: 1...40, using: &rng) * day
            var transaction = ReceiptTransaction(
                transactionId: index == 0 ? otid : "10000008111\(10000 + index)",
                originalTransactionId: otid,
                productId: products[Int.random(in: 0..<products.count, using: &rng)],
                purchaseDate: date(purchase),
                expiresDate: Int.random(in: 0..<20, using: &rng) == 0 ? nil : date(expires),
                isTrialPeriod: Bool.random(using: &rng)
            )
            switch Int.random(in: 0..<6, using: &rng) {
            case 0:  // refund
                transaction.cancellationDate = date(purchase + Int64.random(in: 0...day * 20, using: &rng))
                transaction.cancellationReason = Int.random(in: 0...1, using: &rng)
            case 1:  // upgraded away, with the upgrade time (as some receipts show it)
                transaction.isUpgraded = true
                transaction.cancellationDate = date(purchase + Int64.random(in: 0...day * 20, using: &rng))
            case 2 where Bool.random(using: &rng):  // upgraded away without a cancellation date (the usual shape)
                transaction.isUpgraded = true
            default: break
            }
            ours.append(transaction)
        }
        var others: [ReceiptTransaction] = []
        for index in 0..<Int.random(in: 0...3, using: &rng) {
            let expires = randomInstant(&rng)
            others.append(
                ReceiptTransaction(
                    transactionId: "20000009\(index)",
                    originalTransactionId: "2000000922222222",
                    productId: "com.example.reader.video",
                    purchaseDate: date(expires - 30 * day),
                    expiresDate: date(expires)
                )
            )
        }
        var pending: [PendingRenewalInfo] = []
        if Int.random(in: 0..<5, using: &rng) > 0 {
            pending.append(
                PendingRenewalInfo(
                    originalTransactionId: otid,
                    autoRenewProductId: products[Int.random(in: 0..<3, using: &rng)],
                    autoRenewStatus: Bool.random(using: &rng),
                    expirationIntent: Bool.random(using: &rng) ? Int.random(in: 1...5, using: &rng) : nil,
                    isInBillingRetryPeriod: Bool.random(using: &rng),
                    gracePeriodExpiresDate: Bool.random(using: &rng) ? date(randomInstant(&rng)) : nil
                )
            )
        }
        pending.append(PendingRenewalInfo(originalTransactionId: "2000000922222222", autoRenewStatus: true))
        pending.shuffle(using: &rng)

        let foreignKind = Int.random(in: 0..<6, using: &rng)
        let receiptBundle: String? = foreignKind == 0 ? "com.evil.clone" : (foreignKind == 1 ? nil : bundle)
        let all = (ours + others).shuffled(using: &rng)
        let useInApp = Int.random(in: 0..<5, using: &rng) == 0
        let response = VerifyReceiptResponse(
            status: Int.random(in: 0..<4, using: &rng) == 0 ? 21006 : 0,
            environment: Bool.random(using: &rng) ? .production : .sandbox,
            receipt: ReceiptInfo(bundleId: receiptBundle, inApp: useInApp ? all : []),
            latestReceiptInfo: useInApp ? nil : all,
            latestReceipt: "MIIT" + String(repeating: "A", count: 40),
            pendingRenewalInfo: pending
        )
        let states: [SubscriptionState?] = [nil] + SubscriptionState.allCases.map { $0 }
        let stored = StoredSubscription(
            originalTransactionId: otid,
            userId: "u",
            productId: products[0],
            expiresAt: Int.random(in: 0..<4, using: &rng) == 0 ? nil : date(randomInstant(&rng)),
            state: states[Int.random(in: 0..<states.count, using: &rng)],
            autoRenew: Bool.random(using: &rng),
            latestTransactionId: "stored-txn"
        )
        return Case(stored: stored, response: response, foreign: receiptBundle != bundle, ours: ours)
    }

    @Test func engineInvariantsHoldForRandomCases() {
        var rng = SplitMix64(seed: 0x5EED_2024_0601)
        let now = Self.date(Self.nowMs)
        var revokedSeen = 0
        var activeSeen = 0
        var rejectedSeen = 0
        var backwardsSeen = 0
        for caseNumber in 0..<4000 {
            let sample = Self.randomCase(&rng)
            let decision = DecisionEngine.decide(
                stored: sample.stored,
                response: sample.response,
                now: now,
                bundleId: Self.bundle
            )
            let label = "case \(caseNumber)"

            // A move backwards is always recorded with its reason, and only a real move is flagged.
            if let before = sample.stored.expiresAt, let after = decision.expiresAt, after < before,
                !DecisionEngine.sameInstant(after, before)
            {
                #expect(decision.expiryMovedBackwards, "\(label): silent backwards move")
                #expect(
                    decision.expiryMovedBackwardsReason?.isEmpty == false,
                    "\(label): backwards move without a reason"
                )
                backwardsSeen += 1
            } else {
                #expect(!decision.expiryMovedBackwards, "\(label): flagged backwards without moving back")
            }
            // A foreign (or unverifiable) receipt is rejected and never grants anything.
            if sample.foreign {
                #expect(decision.outcome == .rejected && decision.state == nil && !decision.isEntitled, "\(label)")
                #expect(decision.expiresAt == sample.stored.expiresAt, "\(label): foreign receipt changed the expiry")
            }
            let dated = sample.ours.filter { $0.expiresDate != nil }
            // Neither refunded nor replaced by an upgrade: these carry the entitlement.
            let remaining = dated.filter { !$0.isRefunded && !$0.isUpgraded }
            let bestExpiry = remaining.compactMap(\.expiresDate).max()
            let topRefundExpiry = dated.filter(\.isRefunded).compactMap(\.expiresDate).max()
            if !sample.foreign, !dated.isEmpty {
                // Apple's answer is the truth: the latest remaining expiry and its product, whatever was stored.
                if let bestExpiry {
                    #expect(decision.expiresAt == bestExpiry, "\(label): expiry is not Apple's")
                    let products = Set(remaining.filter { $0.expiresDate == bestExpiry }.map(\.productId))
                    #expect(products.contains(decision.productId), "\(label): product is not Apple's")
                }
                // A refund counts as never purchased and never takes away a paid purchase valid now.
                if let bestExpiry, bestExpiry > now {
                    #expect(decision.state == .active, "\(label): a valid unrefunded purchase is not active")
                }
                // Revoked exactly when the refunded transaction held the entitlement and nothing valid remains.
                let expectRevoked: Bool
                if let topRefundExpiry {
                    expectRevoked = bestExpiry.map { topRefundExpiry > $0 && $0 <= now } ?? true
                } else {
                    expectRevoked = false
                }
                #expect((decision.state == .revoked) == expectRevoked, "\(label): revoked rule")
                // An upgraded transaction entitles nothing after the upgrade: with nothing else, no entitlement.
                if remaining.isEmpty, topRefundExpiry == nil {
                    #expect(!decision.isEntitled, "\(label): only upgraded-away transactions, yet entitled")
                }
                // The stored row never changes Apple's verdict (only the outcome compares with it).
                var otherStored = sample.stored
                otherStored.expiresAt = Self.date(Self.nowMs + 700 * Self.day)
                otherStored.productId = "com.example.reader.lifetime"
                otherStored.state = .active
                let fromOther = DecisionEngine.decide(
                    stored: otherStored,
                    response: sample.response,
                    now: now,
                    bundleId: Self.bundle
                )
                #expect(
                    fromOther.state == decision.state && fromOther.expiresAt == decision.expiresAt
                        && fromOther.productId == decision.productId,
                    "\(label): the stored row changed Apple's verdict"
                )
            }
            if decision.state == .revoked { revokedSeen += 1 }
            // Active means strictly after now.
            if decision.state == .active {
                activeSeen += 1
                #expect(decision.expiresAt.map { $0 > now } == true, "\(label): active with expiry <= now")
            }
            // No transactions of ours: rejected.
            if sample.ours.isEmpty {
                #expect(decision.outcome == .rejected, "\(label)")
            }
            if decision.outcome == .rejected { rejectedSeen += 1 }

            // Order independence: shuffled arrays give the same decision.
            var shuffled = sample.response
            shuffled.latestReceiptInfo?.shuffle(using: &rng)
            shuffled.receipt?.inApp.shuffle(using: &rng)
            shuffled.pendingRenewalInfo.shuffle(using: &rng)
            let again = DecisionEngine.decide(
                stored: sample.stored,
                response: shuffled,
                now: now,
                bundleId: Self.bundle
            )
            #expect(again == decision, "\(label): decision depends on array order")
        }
        // The generator must actually reach the interesting regions.
        #expect(revokedSeen > 100 && activeSeen > 100 && rejectedSeen > 100 && backwardsSeen > 100)
    }
}
