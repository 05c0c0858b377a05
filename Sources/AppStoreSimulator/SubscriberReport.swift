/// The Subscriber report (Sales and Trends, SUBSCRIBER / DETAILED / DAILY, version 1_3) of one Pacific day, as
/// tab-separated UTF-8 text with the columns docs/apple-reports.md lists: one row per event of that day
/// (docs/simulator.md, "App Store Connect reports").
struct SubscriberReport: Sendable {
    static let columns = [
        "Event Date", "App Name", "App Apple ID", "Subscription Name", "Subscription Apple ID",
        "Subscription Group ID", "Standard Subscription Duration", "Subscription Offer Name", "Promotional Offer ID",
        "Subscription Offer Type", "Subscription Offer Duration", "Marketing Opt-In Duration", "Customer Price",
        "Customer Currency", "Developer Proceeds", "Proceeds Currency", "Preserved Pricing", "Proceeds Reason",
        "Client", "Device", "Country", "Subscriber ID", "Subscriber ID Reset", "Refund", "Purchase Date", "Units",
    ]

    let population: Population
    let appAppleId: Int64

    /// The app's name as App Store Connect shows it: the bundle id's last part.
    var appName: String { String(population.bundleId.split(separator: ".").last ?? "") }

    /// Header and rows, `\n`-terminated lines.
    func text(day: ReportDay, events: [SalesEvent]) -> String {
        var lines = [Self.columns.joined(separator: "\t")]
        for event in events { lines.append(row(day: day, event).joined(separator: "\t")) }
        return lines.joined(separator: "\n") + "\n"
    }

    func row(day: ReportDay, _ event: SalesEvent) -> [String] {
        let t = event.transaction
        let storefront = event.storefront
        let offer = Self.offer(t)
        return [
            day.iso, appName, String(appAppleId), t.product.displayName, population.catalog.appleId(of: t.product),
            t.product.groupId, Self.duration(t.product), offer.name, offer.promotionalId, offer.type,
            offer.duration, "", storefront.signedDecimal(event.customerPrice), storefront.currency,
            storefront.signedDecimal(event.proceeds), storefront.currency, "",
            event.afterOneYear ? "Rate After One Year" : "", "", "iPhone", storefront.country, event.subscriberId, "",
            event.kind == .refund ? "Yes" : "", event.kind == .refund ? ReportDay.containing(t.purchase).iso : "",
            String(event.units),
        ]
    }

    /// `7 Days`, `1 Month`, `1 Year`.
    static func duration(_ product: SimProduct) -> String {
        switch product.period {
        case .week: "7 Days"
        case .month: "1 Month"
        case .year: "1 Year"
        }
    }

    /// The offer columns: name (an offer code's or offer's reference), promotional offer id, type (`Free Trial`,
    /// `Pay As You Go`) and duration (`7 Days`, `3 Months`); empty without an offer.
    static func offer(_ t: SimTransaction) -> (name: String, promotionalId: String, type: String, duration: String) {
        let free = t.isTrial || t.offer?.discountType == SubscriptionOffer.freeTrial
        guard free || t.isIntro || t.offer != nil else { return ("", "", "", "") }
        let type = free ? "Free Trial" : "Pay As You Go"
        let name = t.offer?.identifier ?? t.offerCodeRefName ?? ""
        let promotional = t.offer?.type == 2 ? (t.offer?.identifier ?? "") : ""
        return (name, promotional, type, t.offer.map { words($0.period) } ?? "")
    }

    /// An ISO 8601 duration (`P3M`, `P7D`, `P1W`) in the report's words (`3 Months`, `7 Days`, `1 Week`).
    static func words(_ iso: String) -> String {
        guard iso.hasPrefix("P"), let unit = iso.last, let count = Int(iso.dropFirst().dropLast()) else { return iso }
        let names: [Character: String] = ["D": "Day", "W": "Week", "M": "Month", "Y": "Year"]
        guard let name = names[unit] else { return iso }
        return "\(count) \(name)" + (count == 1 ? "" : "s")
    }
}
