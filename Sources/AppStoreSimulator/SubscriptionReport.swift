/// The Subscription report (Sales and Trends, SUBSCRIPTION / SUMMARY / DAILY, version 1_3) of one Pacific day: the
/// subscriptions active at the end of the day, one row per subscription, offer, price and country, counted by how the
/// customer pays (docs/simulator.md, "Subscription report"). It has no date column.
struct SubscriptionReport: Sendable {
    static let leading = [
        "App Name", "App Apple ID", "Subscription Name", "Subscription Apple ID", "Subscription Group ID",
        "Standard Subscription Duration", "Subscription Offer Name", "Promotional Offer ID", "Customer Price",
        "Customer Currency", "Developer Proceeds", "Proceeds Currency", "Preserved Pricing", "Proceeds Reason",
        "Client", "Device", "State", "Country",
    ]
    /// The count columns; `Subscribers` (distinct customers of the row) is the 14th.
    static let counts = [
        "Active Standard Price Subscriptions", "Active Free Trial Introductory Offer Subscriptions",
        "Active Pay Up Front Introductory Offer Subscriptions", "Active Pay As You Go Introductory Offer Subscriptions",
        "Free Trial Promotional Offer Subscriptions", "Pay Up Front Promotional Offer Subscriptions",
        "Pay As You Go Promotional Offer Subscriptions", "Free Trial Offer Code Subscriptions",
        "Pay Up Front Offer Code Subscriptions", "Pay As You Go Offer Code Subscriptions", "Marketing Opt-Ins",
        "Billing Retry", "Grace Period", "Subscribers", "Free Trial Win-Back Offers", "Pay Up Front Win-Back Offers",
        "Pay As You Go Win-Back Offers",
    ]
    static let subscribersColumn = 13

    let population: Population
    let appAppleId: Int64

    /// Header and rows (sorted) for the subscriptions of `plans` as they stand at `instant` (the day's end).
    func text(plans: [SalesTruth.ReportedPlan], at instant: Int64) -> String {
        var rows: [[String]: (counts: [Int], subscribers: Set<String>)] = [:]
        for reported in plans {
            guard let (key, column) = state(reported, at: instant) else { continue }
            var row = rows[key] ?? (Array(repeating: 0, count: Self.counts.count), [])
            row.counts[column] += 1
            row.subscribers.insert(reported.subscriberId)
            rows[key] = row
        }
        let lines = rows.map { key, value in
            var counts = value.counts
            counts[Self.subscribersColumn] = value.subscribers.count
            return key + counts.map(String.init)
        }.sorted { $0.lexicographicallyPrecedes($1) }
        return ([Self.leading + Self.counts] + lines).map { $0.joined(separator: "\t") }.joined(separator: "\n") + "\n"
    }

    /// The row (its leading columns) and count column of a subscription at `instant`; nil when it is not active, in
    /// billing retry or in a grace period then.
    func state(_ reported: SalesTruth.ReportedPlan, at instant: Int64) -> ([String], Int)? {
        let timeline = reported.timeline
        guard let t = timeline.transactions.last, t.purchase <= instant else { return nil }
        let column: Int
        if instant < t.expires {
            guard t.cancellation.map({ $0 > instant }) ?? true else { return nil }  // refunded: not active
            column = Self.offerColumn(t)
        } else if timeline.gracePeriodExpires.map({ instant < $0 }) ?? false {
            column = 12
        } else if timeline.inBillingRetry {
            column = 11
        } else {
            return nil
        }
        return (leading(reported, t, index: timeline.transactions.count - 1), column)
    }

    /// Which count column an active transaction's offer puts it in.
    static func offerColumn(_ t: SimTransaction) -> Int {
        guard let offer = t.offer else { return t.isTrial ? 1 : (t.isIntro ? 3 : 0) }
        let free = offer.discountType == SubscriptionOffer.freeTrial
        switch offer.type {
        case 1: return free ? 1 : 3
        case 2: return free ? 4 : 6
        case 3: return free ? 7 : 9
        default: return free ? 14 : 16
        }
    }

    private func leading(_ reported: SalesTruth.ReportedPlan, _ t: SimTransaction, index: Int) -> [String] {
        let product = t.product
        let offer = SubscriberReport.offer(t)
        let s = reported.storefront
        let price = reported.prices[index]
        let afterOneYear = reported.afterOneYear[index]
        let proceeds = ProceedsRule.proceeds(of: price, afterOneYear: afterOneYear, storefront: s)
        return [
            String(population.bundleId.split(separator: ".").last ?? ""), String(appAppleId), product.displayName,
            population.catalog.appleId(of: product), product.groupId, SubscriberReport.duration(product), offer.name,
            offer.promotionalId, s.signedDecimal(price), s.currency, s.signedDecimal(proceeds), s.currency, "",
            afterOneYear ? "Rate After One Year" : "", "", "iPhone", "", s.country,
        ]
    }
}
