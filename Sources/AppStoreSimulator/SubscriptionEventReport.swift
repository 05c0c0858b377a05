/// The Subscription Event report (Sales and Trends, SUBSCRIPTION_EVENT / SUMMARY / DAILY, version 1_3) of one Pacific
/// day, as tab-separated UTF-8 text with the columns docs/apple-reports.md lists: one row per distinct combination of
/// the other columns, with `Quantity` the number of events (docs/simulator.md, "Subscription Event report").
struct SubscriptionEventReport: Sendable {
    static let columns = [
        "Event Date", "Event", "App Name", "App Apple ID", "Subscription Name", "Subscription Apple ID",
        "Subscription Group ID", "Standard Subscription Duration", "Subscription Offer Type",
        "Subscription Offer Duration", "Marketing Opt-In", "Marketing Opt-In Duration", "Preserved Pricing",
        "Proceeds Reason", "Subscription Offer Name", "Promotional Offer ID", "Consecutive Paid Periods",
        "Original Start Date", "Client", "Device", "State", "Country", "Previous Subscription Name",
        "Previous Subscription Apple ID", "Days Before Canceling", "Cancellation Reason", "Days Canceled", "Quantity",
    ]

    let population: Population
    let appAppleId: Int64

    /// Header and rows (sorted), `\n`-terminated lines.
    func text(day: ReportDay, events: [SubscriptionEvent]) -> String {
        var quantities: [[String]: Int] = [:]
        for event in events { quantities[row(day: day, event), default: 0] += 1 }
        let rows = quantities.map { $0.key + [String($0.value)] }.sorted { $0.lexicographicallyPrecedes($1) }
        return ([Self.columns] + rows).map { $0.joined(separator: "\t") }.joined(separator: "\n") + "\n"
    }

    /// Every column but `Quantity`.
    func row(day: ReportDay, _ event: SubscriptionEvent) -> [String] {
        let t = event.transaction
        let product = t.product
        let offer = SubscriberReport.offer(t)
        let previous = event.previous?.product
        return [
            day.iso, event.name, String(population.bundleId.split(separator: ".").last ?? ""), String(appAppleId),
            product.displayName, population.catalog.appleId(of: product), product.groupId,
            SubscriberReport.duration(product), offer.type, offer.duration, "", "", "",
            event.afterOneYear ? "Rate After One Year" : "", offer.name, offer.promotionalId,
            String(event.consecutivePaidPeriods), ReportDay.containing(t.originalPurchase).iso, "", "iPhone", "",
            event.storefront.country, previous?.displayName ?? "",
            previous.map { population.catalog.appleId(of: $0) } ?? "",
            event.daysBeforeCanceling.map(String.init) ?? "", event.cancellationReason ?? "",
            event.daysCanceled.map(String.init) ?? "",
        ]
    }
}
