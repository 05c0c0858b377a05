/// The Subscription Event report's events, from the same timelines as the Subscriber report's (docs/simulator.md,
/// "Subscription Event report").
extension SalesTruth {
    /// The events of the Pacific `day`, as the world stood at its end.
    func subscriptionEvents(on day: ReportDay) -> [SubscriptionEvent] {
        var events: [SubscriptionEvent] = []
        for reported in reportedPlans(asOf: day.end - 1) {
            events += purchaseEvents(reported) + endEvents(reported, asOf: day.end - 1)
        }
        return events.filter { $0.at >= day.start && $0.at < day.end }
    }

    /// Each transaction's start, renewal, conversion, change or reactivation, and its refund.
    private func purchaseEvents(_ reported: ReportedPlan) -> [SubscriptionEvent] {
        let transactions = reported.timeline.transactions
        var events: [SubscriptionEvent] = []
        var paidInARow = 0
        for (index, t) in transactions.enumerated() {
            let previous = index > 0 ? transactions[index - 1] : nil
            let lapsed = previous.map { t.purchase > $0.expires } ?? false
            paidInARow = t.isTrial ? 0 : (lapsed ? 1 : paidInARow + 1)
            var event = SubscriptionEvent(
                name: Self.eventName(t, previous: previous, lapsed: lapsed),
                at: t.purchase,
                transaction: t,
                previous: previous.flatMap { $0.product == t.product ? nil : $0 },
                storefront: reported.storefront,
                afterOneYear: reported.afterOneYear[index],
                consecutivePaidPeriods: paidInARow
            )
            if lapsed, let previous { event.daysCanceled = Int((t.purchase - previous.expires) / SimTime.day) }
            events.append(event)
            let sale = SalesEvent(
                kind: .purchase,
                at: t.purchase,
                transaction: t,
                storefront: reported.storefront,
                customerPrice: reported.prices[index],
                proceeds: 0,
                afterOneYear: reported.afterOneYear[index],
                subscriberId: reported.subscriberId
            )
            if let refund = refundEvent(sale) {
                event.name = "Refund"
                event.at = refund.at
                event.previous = nil
                event.daysCanceled = nil
                events.append(event)
            }
        }
        return events
    }

    /// Apple's name for the purchase of `t` after `previous`.
    static func eventName(_ t: SimTransaction, previous: SimTransaction?, lapsed: Bool) -> String {
        guard let previous else {
            if t.offer?.type == 3 { return "Start Offer Code" }
            return t.isTrial || t.offer?.type == 1 ? "Start Introductory Offer" : "Subscribe"
        }
        if lapsed { return "Reactivate" }
        if previous.product != t.product {
            if t.product.level < previous.product.level { return "Upgrade" }
            return t.product.level > previous.product.level ? "Downgrade" : "Crossgrade"
        }
        if previous.offer?.type == 1, t.offer == nil { return "Paid Subscription from Introductory Offer" }
        return "Renew"
    }

    /// How the subscription's renewals stopped by `asOf`: a cancellation at the end of its last period, or billing
    /// retry (or a grace period) from then, and a cancellation when the 60 days of billing retry ran out.
    private func endEvents(_ reported: ReportedPlan, asOf: Int64) -> [SubscriptionEvent] {
        let timeline = reported.timeline
        guard let stop = timeline.stop, let last = timeline.transactions.last, last.expires <= asOf else { return [] }
        let index = timeline.transactions.count - 1
        let paid = timeline.transactions.reversed().prefix { !$0.isTrial }.count
        var event = SubscriptionEvent(
            name: "Cancel",
            at: last.expires,
            transaction: last,
            storefront: reported.storefront,
            afterOneYear: reported.afterOneYear[index],
            consecutivePaidPeriods: paid
        )
        switch stop {
        case .autoRenewOff:
            event.cancellationReason = "Canceled"
            event.daysBeforeCanceling = reported.plan.autoRenewOffAt.map {
                Int(max(0, $0 - last.purchase) / SimTime.day)
            }
        case .priceIncreaseDeclined:
            event.cancellationReason = "Price Increase Consent"
        case .maxRenewals:
            event.cancellationReason = "Other"
        case .billingFailure:
            let from = last.offer?.type == 1 ? "Introductory Offer" : "Paid Subscription"
            event.name = reported.plan.graceDays == nil ? "Billing Retry from \(from)" : "Grace Period from \(from)"
            var canceled = event
            canceled.name = "Canceled from Billing Retry"
            canceled.at = last.expires + SubscriptionPlan.billingRetryWindow
            canceled.cancellationReason = "Billing Issue"
            return [event, canceled]
        }
        return [event]
    }
}
