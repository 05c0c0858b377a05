extension ReportHTML {
    /// Why subscriptions lapsed (Apple's expiration intent), the offer mix with its conversions, and the answers to
    /// price increases (docs/reports.md, "Churn, offers and price increases"); empty for a summary written before
    /// they were counted.
    static func churnAndOffersSection(_ c: ChurnAndOffers?) -> String {
        guard let c else { return "" }
        let bars = (ChurnAndOffers.reasons.map(\.1) + [ChurnAndOffers.unknownReason]).map {
            (label(ofReason: $0), c.churnByReason[$0] ?? 0)
        }
        let chart = BarsChart(id: chartIds[4], title: "Lapses by expiration reason", color: "#6d4c41")
        let note =
            "Subscriptions this run found lapsed (entitled before, not after), by the reason in Apple's renewal "
            + "info (expirationIntent); \"no reason given\" when Apple's answer had none (verifyReceipt often, "
            + "and every run before reasons were kept)."
        var out = barsSection(
            "Churn, offers and price increases",
            chart,
            bars: bars,
            note: note,
            columns: [
                "reason", "lapsed",
            ]
        )
        out += "<h3 id=\"offer-mix\">Offer mix</h3>\n"
        out += "<p class=\"note\">Offers started: transactions of the period with an offer whose previous "
        out += "transaction had none of that type (a family member's copy is the purchaser's). Converted: paid, "
        out += "full-price renewals of the period right after such an offer.</p>\n"
        out += table(
            columns: ["offer", "started", "converted"],
            rows: ChurnAndOffers.offerTypes.map { type in
                let counts = c.offers[type.1] ?? ChurnAndOffers.OfferCounts()
                return [label(ofOffer: type.1), "\(counts.started)", "\(counts.converted)"]
            },
            numericFrom: 1
        )
        let p = c.priceIncrease
        out += "<h3 id=\"price-increase\">Price increases</h3>\n"
        out += "<p class=\"note\">Entitled subscriptions by Apple's priceIncreaseStatus: awaiting consent to a price "
        out += "increase that needs it (they lapse at renewal without it), consented or none needed; and lapses "
        out += "because the customer did not consent.</p>\n"
        out += table(
            columns: ["measure", "subscriptions"],
            rows: [
                ["Awaiting consent", "\(p.awaitingConsent)"], ["Consented or none needed", "\(p.consented)"],
                ["Lapsed: declined the price increase", "\(p.lapsedDeclined)"],
            ],
            numericFrom: 1
        )
        if !p.awaitingConsentByProduct.isEmpty {
            out += table(
                columns: ["product", "awaiting consent"],
                rows: p.awaitingConsentByProduct.sorted { $0.key < $1.key }.map { [$0.key, "\($0.value)"] },
                numericFrom: 1
            )
        }
        return out + "</section>\n"
    }

    static func label(ofReason reason: String) -> String {
        switch reason {
        case "customer_cancelled": "Customer cancelled"
        case "billing_error": "Billing error"
        case "declined_price_increase": "Declined a price increase"
        case "product_unavailable": "Product unavailable"
        case "other": "Other"
        default: "No reason given"
        }
    }

    static func label(ofOffer offer: String) -> String {
        switch offer {
        case "introductory": "Introductory (free trial or intro price)"
        case "promotional": "Promotional"
        case "offer_code": "Offer code"
        case "win_back": "Win-back"
        default: "Offer code or promotional (verifyReceipt does not tell)"
        }
    }
}
