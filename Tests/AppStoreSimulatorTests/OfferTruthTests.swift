import Foundation
import Testing

@testable import AppStoreSimulator

/// The offer mix the simulator states for a first run's period (`period_offers` of truth.jsonl, docs/simulator.md),
/// counted by the definitions of docs/reports.md ("Churn, offers and price increases"): on hand-made timelines whose
/// figures are written out here, and on an exported population.
@Suite struct OfferTruthTests {
    /// A first run at 23:00 UTC: its period is the calendar day, from `midnight`.
    static let now = SimTime.parseRFC3339("2026-11-21T23:00:00Z")!
    static let midnight = SimTime.parseRFC3339("2026-11-21T00:00:00Z")!
    static let catalog = ProductCatalog(bundleId: "com.example.renewals", groupBase: 7000)

    static func plan(
        _ id: UInt64,
        start: Int64,
        _ change: (inout SubscriptionPlan) -> Void = { _ in }
    ) -> SubscriptionPlan {
        var plan = SubscriptionPlan(
            originalTransactionId: id * 1000,
            webOrderLineItemBase: id * 1000 + 500,
            product: catalog.proMonthly,
            start: start,
            sandbox: false
        )
        change(&plan)
        return plan
    }

    static func figures(_ plan: SubscriptionPlan) -> [String: OfferTruth.Counts] {
        OfferTruth(transactions: plan.timeline(at: now).transactions, after: midnight, through: now).byType
    }

    /// `n` months before `at`: the purchase `n` monthly renewals before it.
    static func monthsBefore(_ at: Int64, _ n: Int64) -> Int64 { SimTime.addMonths(at, -n) }

    @Test func introductoryOffersStartAndConvertInThePeriodOnly() {
        let hour = SimTime.hour
        // A free trial bought today: an introductory offer started.
        #expect(
            Self.figures(Self.plan(1, start: Self.midnight + 2 * hour) { $0.trial = true })
                == ["introductory": .init(started: 1, converted: 0)]
        )
        // A trial that ended today: its first paid renewal converted it.
        let converted = Self.plan(2, start: Self.midnight + 2 * hour - 7 * SimTime.day) { $0.trial = true }
        #expect(Self.figures(converted) == ["introductory": .init(started: 0, converted: 1)])
        // A trial bought before midnight started yesterday and converts next week: nothing today.
        #expect(Self.figures(Self.plan(3, start: Self.midnight - hour) { $0.trial = true }).isEmpty)
        // A trial followed by introductory periods is one offer: the intro-price period starts nothing new.
        let trialThenIntro = Self.plan(4, start: Self.midnight + 3 * hour - 7 * SimTime.day) {
            $0.trial = true
            $0.introCount = 2
        }
        #expect(Self.figures(trialThenIntro).isEmpty)
        // A family member's copy is the purchaser's offer: never counted.
        let shared = Self.plan(5, start: Self.midnight + 2 * hour - 7 * SimTime.day) {
            $0.trial = true
            $0.familyShared = true
        }
        #expect(Self.figures(shared).isEmpty)
    }

    @Test func offerCodesAndPromotionalOffersConvertAtTheFirstFullPriceRenewal() {
        let renewal = Self.midnight + 3 * SimTime.hour
        // Two offer-code periods, then the full price today: converted, nothing started.
        let code = Self.plan(10, start: Self.monthsBefore(renewal, 2)) {
            $0.introCount = 2
            $0.offerCodeRefName = "WINTER_PROMO"
        }
        #expect(Self.figures(code) == ["offer_code": .init(started: 0, converted: 1)])
        // Its second offer period today continues the offer: nothing.
        let codeGoingOn = Self.plan(11, start: Self.monthsBefore(renewal, 1)) {
            $0.introCount = 2
            $0.offerCodeRefName = "WINTER_PROMO"
        }
        #expect(Self.figures(codeGoingOn).isEmpty)
        // A free trial, then offer-code periods from today: an offer of another type started.
        let trialThenCode = Self.plan(14, start: renewal - 7 * SimTime.day) {
            $0.trial = true
            $0.introCount = 1
            $0.offerCodeRefName = "PARTNER_3M_HALF"
        }
        #expect(Self.figures(trialThenCode) == ["offer_code": .init(started: 1, converted: 0)])
        // A promotional period starting with today's renewal.
        let promo = Self.plan(12, start: Self.monthsBefore(renewal, 3)) {
            $0.promotionalOffer = .init(identifier: "RETAIN_HALF_OFF", firstIndex: 3, count: 2)
        }
        #expect(Self.figures(promo) == ["promotional": .init(started: 1, converted: 0)])
        // A promotional period that ended with yesterday's: today's renewal is at full price.
        let promoEnded = Self.plan(13, start: Self.monthsBefore(renewal, 3)) {
            $0.promotionalOffer = .init(identifier: "RETAIN_HALF_OFF", firstIndex: 1, count: 2)
        }
        #expect(Self.figures(promoEnded) == ["promotional": .init(started: 0, converted: 1)])
    }

    @Test func aWinBackStartsAndOnlyARenewalConverts() {
        let hour = SimTime.hour
        let start = Self.monthsBefore(Self.midnight, 4)
        func lapsed(_ id: UInt64, back: Int64, count: Int) -> SubscriptionPlan {
            Self.plan(id, start: start) {
                $0.autoRenewOffAt = start + SimTime.day
                $0.winBack = .init(at: back, to: Self.catalog.proMonthly, offerIdentifier: "WINBACK", count: count)
            }
        }
        // Back today with a win-back offer: started.
        #expect(
            Self.figures(lapsed(20, back: Self.midnight + 5 * hour, count: 1))
                == ["win_back": .init(started: 1, converted: 0)]
        )
        // Back a month ago for one period: today's renewal at full price converted it.
        #expect(
            Self.figures(lapsed(21, back: Self.monthsBefore(Self.midnight + 5 * hour, 1), count: 1))
                == ["win_back": .init(started: 0, converted: 1)]
        )
    }

    @Test func refundedAndUpgradedTransactionsAreNoConversion() {
        let conversion = Self.midnight + 2 * SimTime.hour
        // The paid renewal after the trial, refunded today: a refund, not a conversion.
        let refunded = Self.plan(30, start: conversion - 7 * SimTime.day) {
            $0.trial = true
            $0.refunds = [.init(transactionIndex: 1, at: conversion + SimTime.hour, reason: 0)]
        }
        #expect(Self.figures(refunded).isEmpty)
        // The same refund is not known yet at an earlier instant of the day: then it is a conversion.
        let before = OfferTruth(
            transactions: refunded.timeline(at: conversion + 1).transactions,
            after: Self.midnight,
            through: conversion + 1
        )
        #expect(before.byType == ["introductory": .init(started: 0, converted: 1)])
        // An upgrade today out of an introductory period: the new plan's first transaction is an upgrade.
        let upgraded = Self.plan(31, start: Self.monthsBefore(conversion, 1) + SimTime.hour) {
            $0.introCount = 1
            $0.upgrade = .init(at: conversion, to: Self.catalog.proPlusMonthly)
        }
        let transactions = upgraded.timeline(at: Self.now).transactions
        #expect(transactions.count == 2 && transactions[0].isUpgraded && transactions[1].offer == nil)
        #expect(Self.figures(upgraded).isEmpty)
    }

    @Test func exportStatesEveryServedSubscriptionsOffersAndNullForTheOthers() throws {
        let dir = temporaryDirectory("offers")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let pop = Population(seed: 2026, subscriptions: 2000, anchor: Self.now)
        _ = try PopulationExporter(population: pop).export(to: dir, now: Self.now)
        let served = Set(
            try readJSONLines(dir + "/server-api/ledger.jsonl").compactMap { $0["original_transaction_id"] as? String }
        )
        var started = 0
        for row in try readJSONLines(dir + "/truth.jsonl") {
            let id = try #require(row["original_transaction_id"] as? String)
            #expect(row.keys.contains("period_offers"))
            let offers = row["period_offers"] as? [String: [String: Int]]
            #expect((offers != nil) == served.contains(id), "\(id)")
            for (name, counts) in offers ?? [:] {
                #expect(["introductory", "promotional", "offer_code", "win_back"].contains(name))
                #expect(Set(counts.keys) == ["started", "converted"] && counts.values.contains { $0 > 0 })
                started += counts["started"] ?? 0
            }
        }
        // Free trials bought this morning, before the population's anchor (the run's as-of).
        #expect(started > 0)
    }
}
