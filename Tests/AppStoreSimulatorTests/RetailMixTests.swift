import Foundation
import Testing

@testable import AppStoreSimulator

/// The `retail` mix (docs/simulator.md, "Mixes"): ordinary customers, renewals on every day before and after the
/// anchor, refunds at a few percent of the purchases, and the default `scenarios` world left as it was.
@Suite struct RetailMixTests {
    static let anchor = SimTime.parseRFC3339("2026-11-27T23:00:00Z")!
    static let day = SimTime.day

    static let population = Population(seed: 4, subscriptions: 6000, anchor: anchor, mix: .retail)

    /// Paid purchases and refunds per UTC day number, of the production families of our app, as of `asOf`.
    func daily(asOf: Int64) -> (purchases: [Int64: Int], refunds: [Int64: Int]) {
        let pop = Self.population
        var purchases: [Int64: Int] = [:]
        var refunds: [Int64: Int] = [:]
        for family in pop.families where !family.sandbox && family.bundleId == pop.bundleId {
            for plan in family.subscriptions {
                for t in plan.timeline(at: asOf).transactions where !t.isTrial && !t.familyShared {
                    purchases[t.purchase / Self.day, default: 0] += 1
                    if let at = t.cancellation, !t.isUpgraded { refunds[at / Self.day, default: 0] += 1 }
                }
            }
        }
        return (purchases, refunds)
    }

    @Test func theDeckHoldsNoFaultsAndMostlyOrdinaryCustomers() {
        let scenarios = Self.population.families.map(\.scenario)
        let faults: Set<Scenario> = [
            .foreignApp, .unauthenticatable, .malformedReceipt, .absurdDate, .nearInt64Max, .nulInText,
            .foreignSecretReceipt, .appStoredLaterExpiry, .deletedAccountActive, .midPeriodRefund,
        ]
        #expect(scenarios.allSatisfy { !faults.contains($0) })
        let ordinary = scenarios.filter { [.activeNotRenewed, .silentRenewal].contains($0) }.count
        #expect(Double(ordinary) / Double(scenarios.count) > 0.5)
        #expect(Population(seed: 4, subscriptions: 50, anchor: Self.anchor).mix == .scenarios)
    }

    @Test func renewalsFallOnEveryDayBeforeAndAfterTheAnchor() {
        let last = Self.anchor / Self.day
        let (purchases, _) = daily(asOf: Self.anchor + 35 * Self.day)
        let days = (last - 28)...(last + 34)
        let counts = days.map { purchases[$0, default: 0] }
        let mean = Double(counts.reduce(0, +)) / Double(counts.count)
        #expect(mean > 100, "\(mean)")
        for (day, count) in zip(days, counts) {
            #expect(
                Double(count) > mean * 0.5 && Double(count) < mean * 1.6,
                "day \(day - last): \(count), mean \(mean)"
            )
        }
    }

    @Test func refundsAfterTheAnchorStayAtAFewPercentOfThePurchases() {
        let first = Self.anchor / Self.day + 1
        let (purchases, refunds) = daily(asOf: Self.anchor + 35 * Self.day)
        let window = first...(first + 30)
        let bought = window.map { purchases[$0, default: 0] }.reduce(0, +)
        let refunded = window.map { refunds[$0, default: 0] }.reduce(0, +)
        let share = Double(refunded) / Double(bought)
        #expect(share > 0.003 && share < 0.06, "\(refunded) refunds of \(bought) purchases")
        // None of those refunds exists yet at the anchor: the world up to it is what the scenarios say.
        let (_, before) = daily(asOf: Self.anchor)
        #expect(window.allSatisfy { before[$0] == nil })
    }
}
