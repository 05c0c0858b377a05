/// The walk of `SubscriptionPlan.timeline(at:)` through a plan's periods, one transaction a step: the transactions
/// so far and the segment being renewed (a product renewed from `segmentStart`, `segmentIndex` periods in), which
/// an upgrade, a resubscription, a win-back, a plan change, a trial's end or an extension starts afresh.
///
/// Each step is handed the plan rather than the walk keeping a copy: in a debug build (the tests') a mutating method
/// that reads a stored plan's fields copies the whole plan each time, and this walk is the simulator's hottest code.
struct TimelineWalk {
    /// The evaluation instant: nothing after it has happened.
    let now: Int64
    var txns: [SimTransaction] = []
    var segmentStart: Int64
    var segmentProduct: SimProduct
    var segmentIndex: Int64 = 0
    /// The purchase instant of the next transaction.
    var purchase: Int64
    var stop: SubscriptionTimeline.Stop?
    /// Paid (not trial) transactions so far: the first `introCount` are introductory.
    var paidIndex = 0
    var upgradeApplied = false
    var resubscribed = false
    /// Index of the first transaction after a win-back, once the customer came back.
    var winBackStart: Int?

    init(_ plan: SubscriptionPlan, now: Int64) {
        self.now = now
        segmentStart = plan.start
        segmentProduct = plan.product
        purchase = plan.start
    }

    /// Adds `plan`'s transaction purchased at `purchase` and moves to the next one; false once there is none by
    /// `now` (its renewal lies ahead, or renewals stopped: `stop`).
    mutating func step(_ plan: SubscriptionPlan) -> Bool {
        let (txn, extended) = nextTransaction(plan)
        if endsForNewProduct(txn, plan) { return true }
        txns.append(txn)
        let next = txn.expires
        if next > now { return false }
        if let max = plan.maxRenewals, txns.count > max {
            stop = .maxRenewals
            return false
        }
        if let off = plan.autoRenewOffAt, off <= next, winBackStart == nil {
            if let back = plan.winBack, back.at > next, back.at <= now {
                // Lapsed, then came back with a win-back offer: a new purchase, same original id.
                winBackStart = txns.count
                startSegment(at: back.at, product: back.to)
                return true
            }
            stop = .autoRenewOff
            return false
        }
        if let increase = plan.priceIncrease, next >= increase.effectiveAt,
            !(increase.consentedAt.map { $0 <= next } ?? false)
        {
            stop = .priceIncreaseDeclined
            return false
        }
        if let fail = plan.billingFailsFrom, fail <= next {
            stop = .billingFailure
            return false
        }
        renew(plan, at: next, restartingSegment: txn.isTrial || extended)
        return true
    }

    /// The transaction purchased at `purchase` (its expiry moved by the extensions granted during it by `now`, its
    /// offer, refund and price), and whether it was extended.
    private mutating func nextTransaction(_ plan: SubscriptionPlan) -> (SimTransaction, extended: Bool) {
        let index = txns.count
        let isTrial = plan.trial && index == 0
        var expires: Int64
        if isTrial {
            expires = plan.sandbox ? purchase + 3 * SimTime.minute : purchase + plan.trialDays * SimTime.day
        } else {
            expires = segmentProduct.periodEnd(from: segmentStart, count: segmentIndex + 1, sandbox: plan.sandbox)
        }
        let isIntro = !isTrial && paidIndex < plan.introCount && winBackStart == nil
        var extended = false
        for ext in plan.extensions where ext.at <= now && ext.at >= purchase && ext.at < expires {
            expires += ext.days * SimTime.day
            extended = true
        }
        var txn = SimTransaction(
            index: index,
            transactionId: plan.originalTransactionId + UInt64(index),
            originalTransactionId: plan.originalTransactionId,
            webOrderLineItemId: plan.webOrderLineItemBase + UInt64(index),
            product: segmentProduct,
            purchase: purchase,
            originalPurchase: plan.start,
            expires: expires,
            isTrial: isTrial,
            isIntro: isIntro,
            offerCodeRefName: isIntro ? plan.offerCodeRefName : nil,
            familyShared: plan.familyShared,
            cancellation: nil,
            cancellationReason: nil,
            isUpgraded: false
        )
        txn.offer = plan.offer(index: index, isTrial: isTrial, isIntro: isIntro, winBackStart: winBackStart)
        txn.priceIncreased = plan.priceIncrease.map { index > 0 && purchase >= $0.effectiveAt } ?? false
        if !isTrial { paidIndex += 1 }
        for refund in plan.refunds
        where refund.transactionIndex == index && refund.at <= now
            && !(refund.reversedAt.map { $0 <= now } ?? false)
        {
            txn.cancellation = refund.at
            txn.cancellationReason = refund.reason
        }
        return (txn, extended)
    }

    /// Whether an upgrade or a resubscription by `now` ends `txn` early: then `txn` is added (an upgraded one marked
    /// so) and a segment of the new product starts at that instant.
    private mutating func endsForNewProduct(_ txn: SimTransaction, _ plan: SubscriptionPlan) -> Bool {
        if !upgradeApplied, let up = plan.upgrade, up.at > txn.purchase, up.at < txn.expires {
            upgradeApplied = true
            if up.at <= now {
                var upgraded = txn
                upgraded.isUpgraded = true
                upgraded.cancellation = up.carriesCancellationDate ? up.at : nil
                upgraded.cancellationReason = nil
                txns.append(upgraded)
                startSegment(at: up.at, product: up.to)
                return true
            }
        }
        if !resubscribed, let re = plan.resubscription, re.at > txn.purchase, re.at < txn.expires, re.at <= now {
            resubscribed = true
            txns.append(txn)
            startSegment(at: re.at, product: re.to)
            return true
        }
        return false
    }

    /// The renewal at `next`: after a trial or an extended period the segment restarts there, a plan change
    /// decided by then switches the product, otherwise the segment goes on.
    private mutating func renew(_ plan: SubscriptionPlan, at next: Int64, restartingSegment: Bool) {
        if restartingSegment {
            segmentStart = next
            segmentIndex = 0
        } else if let change = plan.planChange, change.decidedAt <= next, change.to != segmentProduct {
            segmentStart = next
            segmentProduct = change.to
            segmentIndex = 0
        } else {
            segmentIndex += 1
        }
        purchase = next
    }

    /// A new segment of `product` from `at`, whose first purchase is then.
    private mutating func startSegment(at: Int64, product: SimProduct) {
        segmentStart = at
        segmentProduct = product
        segmentIndex = 0
        purchase = at
    }
}
