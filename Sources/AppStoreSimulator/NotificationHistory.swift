import Foundation

/// Get Notification History (docs/simulator.md, "Notification history"): the App Store Server Notifications
/// V2 Apple would have sent for the population's events, derived from the same timelines, each a signed
/// `ResponseBodyV2DecodedPayload` with its own signed transaction and renewal info, and its delivery attempts
/// (about one in ten needed a retry; one in fifty never got through).
struct NotificationHistory: Sendable {
    /// One notification: what happened, when, to which transaction.
    struct Event: Sendable {
        /// What the payload carries: a subscription's transaction and renewal info (`data`), a one-time purchase's
        /// transaction (`data`, no renewal info), a mass extension's `summary`, or a notice's own payload.
        enum Kind: Sendable, Equatable {
            case subscription
            case oneTime(Int)
            case summary(Int)
            case notice(Int)
        }

        var type: String
        var subtype: String?
        var date: Int64
        /// The customer's family index (-1 for a mass extension's summary).
        var family: Int
        var plan: Int
        var transactionIndex: Int
        var kind: Kind = .subscription
    }

    /// The request body, checked.
    struct Request: Sendable {
        var startDate: Int64
        var endDate: Int64
        var notificationType: String?
        var notificationSubtype: String?
        var transactionId: UInt64?
        var onlyFailures: Bool
        var canonical: String
    }

    /// How far back history goes: 180 days in production, 30 in sandbox.
    static func retention(sandbox: Bool) -> Int64 { (sandbox ? 30 : 180) * SimTime.day }
    static let retryOffsets: [Int64] = [
        SimTime.hour, 12 * SimTime.hour, 24 * SimTime.hour, 48 * SimTime.hour,
        72 * SimTime.hour,
    ]

    /// Parses and checks a body at `now`; an Apple error code when refused.
    static func parse(_ body: [UInt8], now: Int64, sandbox: Bool) -> Result<Request, ErrorCode> {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] else {
            return .failure(ErrorCode(code: 4_000_012))
        }
        guard let start = (object["startDate"] as? NSNumber)?.int64Value else {
            return .failure(ErrorCode(code: 4_000_015))
        }
        guard let end = (object["endDate"] as? NSNumber)?.int64Value else {
            return .failure(ErrorCode(code: 4_000_016))
        }
        if start < now - retention(sandbox: sandbox) { return .failure(ErrorCode(code: 4_000_012)) }
        if start >= end { return .failure(ErrorCode(code: 4_000_013)) }
        let type = object["notificationType"] as? String
        let subtype = object["notificationSubtype"] as? String
        var transactionId: UInt64?
        if let text = object["transactionId"] as? String {
            guard let id = ServerAPIService.transactionId(text[...]) else {
                return .failure(ErrorCode(code: 4_000_006))
            }
            transactionId = id
        }
        if type != nil && transactionId != nil { return .failure(ErrorCode(code: 4_000_019)) }
        if subtype != nil && type == nil { return .failure(ErrorCode(code: 4_000_018)) }
        let onlyFailures = object["onlyFailures"] as? Bool ?? false
        let canonical = [
            String(start), String(end), type ?? "", subtype ?? "", transactionId.map(String.init) ?? "",
            String(onlyFailures),
        ].joined(separator: "|")
        return .success(
            Request(
                startDate: start,
                endDate: min(end, now),
                notificationType: type,
                notificationSubtype: subtype,
                transactionId: transactionId,
                onlyFailures: onlyFailures,
                canonical: canonical
            )
        )
    }

    struct ErrorCode: Error { var code: Int }

    /// Every notification of one subscription up to `now`, oldest first.
    static func events(family: ReceiptFamily, planIndex: Int, now: Int64) -> [Event] {
        let plan = family.subscriptions[planIndex]
        let tl = plan.timeline(at: now)
        var out: [Event] = []
        func add(_ type: String, _ subtype: String?, _ date: Int64, _ index: Int) {
            guard date <= now else { return }
            out.append(
                Event(
                    type: type,
                    subtype: subtype,
                    date: date,
                    family: family.index,
                    plan: planIndex,
                    transactionIndex: index
                )
            )
        }
        purchaseEvents(plan, tl, add)
        // A refund Apple reversed: the transaction shows no refund now, but both notifications were sent.
        for refund in plan.refunds {
            guard let reversed = refund.reversedAt, refund.transactionIndex < tl.transactions.count else { continue }
            let familyShared = tl.transactions[refund.transactionIndex].familyShared
            add(familyShared ? "REVOKE" : "REFUND", nil, refund.at, refund.transactionIndex)
            add("REFUND_REVERSED", nil, reversed, refund.transactionIndex)
        }
        laterEvents(plan, tl, now: now, add)
        guard let last = tl.transactions.last else { return out }
        if let off = plan.autoRenewOffAt {
            let current = tl.transactions.last { $0.purchase <= off } ?? last
            add("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", off, current.index)
        }
        if let change = plan.planChange {
            add(
                "DID_CHANGE_RENEWAL_PREF",
                change.to.level > plan.product.level ? "DOWNGRADE" : nil,
                change.decidedAt,
                last.index
            )
        }
        switch tl.stop {
        case .billingFailure?:
            add("DID_FAIL_TO_RENEW", plan.graceDays == nil ? nil : "GRACE_PERIOD", last.expires, last.index)
            if let days = plan.graceDays {
                add("GRACE_PERIOD_EXPIRED", nil, last.expires + days * SimTime.day, last.index)
            }
            add("EXPIRED", "BILLING_RETRY", last.expires + SubscriptionPlan.billingRetryWindow, last.index)
        case .autoRenewOff?:
            add("EXPIRED", "VOLUNTARY", last.expires, last.index)
        case .priceIncreaseDeclined?:
            add("EXPIRED", "PRICE_INCREASE", last.expires, last.index)
        case .maxRenewals?, nil:
            break
        }
        return out.sorted { $0.date < $1.date }
    }

    /// SUBSCRIBED, DID_RENEW, upgrades, offers redeemed and refunds, per transaction.
    private static func purchaseEvents(
        _ plan: SubscriptionPlan,
        _ tl: SubscriptionTimeline,
        _ add: (String, String?, Int64, Int) -> Void
    ) {
        for t in tl.transactions {
            if t.index == 0 {
                add("SUBSCRIBED", "INITIAL_BUY", t.purchase, t.index)
            } else if let up = plan.upgrade, up.at == t.purchase {
                add("DID_CHANGE_RENEWAL_PREF", "UPGRADE", t.purchase, t.index)
            } else if let re = plan.resubscription, re.at == t.purchase {
                add("SUBSCRIBED", "RESUBSCRIBE", t.purchase, t.index)
            } else if let back = plan.winBack, back.at == t.purchase {
                // Lapsed before: the EXPIRED of that stop was sent, then the resubscription with the offer.
                add("EXPIRED", "VOLUNTARY", tl.transactions[t.index - 1].expires, t.index - 1)
                add("SUBSCRIBED", "RESUBSCRIBE", t.purchase, t.index)
                add("OFFER_REDEEMED", "RESUBSCRIBE", t.purchase, t.index)
            } else {
                add("DID_RENEW", nil, t.purchase, t.index)
            }
            if t.isIntro, t.offerCodeRefName != nil, t.index <= 1 || !(tl.transactions[t.index - 1].isIntro) {
                add("OFFER_REDEEMED", t.index == 0 ? "INITIAL_BUY" : "RESUBSCRIBE", t.purchase, t.index)
            }
            if t.offer?.type == 2, t.index == plan.promotionalOffer?.firstIndex, t.index > 0 {
                // Redeemed during the previous period, for the active subscription (no subtype).
                let previous = tl.transactions[t.index - 1]
                add("OFFER_REDEEMED", nil, max(previous.purchase + SimTime.hour, t.purchase - SimTime.day), t.index - 1)
            }
            if t.isRefunded, let at = t.cancellation {
                add(t.familyShared ? "REVOKE" : "REFUND", nil, at, t.index)
            }
        }
    }

    /// Price increases, renewal-date extensions and refund requests.
    private static func laterEvents(
        _ plan: SubscriptionPlan,
        _ tl: SubscriptionTimeline,
        now: Int64,
        _ add: (String, String?, Int64, Int) -> Void
    ) {
        func index(at date: Int64) -> Int {
            (tl.transactions.last { $0.purchase <= date } ?? tl.transactions.first)?.index ?? 0
        }
        if let increase = plan.priceIncrease {
            add("PRICE_INCREASE", "PENDING", increase.announcedAt, index(at: increase.announcedAt))
            if let consented = increase.consentedAt {
                add("PRICE_INCREASE", "ACCEPTED", consented, index(at: consented))
            }
        }
        for ext in plan.extensions { add("RENEWAL_EXTENDED", nil, ext.at, index(at: ext.at)) }
        for request in plan.refundRequests {
            add("CONSUMPTION_REQUEST", nil, request.requestedAt, request.transactionIndex)
            if plan.outcome(of: request, at: now) == "declined", let declined = request.declinedAt {
                add("REFUND_DECLINED", nil, declined, request.transactionIndex)
            }
        }
    }

    /// Delivery attempts of a notification: (date, result).
    static func attempts(seed: UInt64, event: Event, otid: UInt64) -> [(Int64, String)] {
        let h = SeededRandom.hash(seed, 0x5E4D, otid, UInt64(bitPattern: event.date))
        if h % 50 == 0 {
            return [(event.date, "UNSUCCESSFUL_HTTP_RESPONSE_CODE")]
                + retryOffsets.map { (event.date + $0, "UNSUCCESSFUL_HTTP_RESPONSE_CODE") }
        }
        if h % 10 == 0 { return [(event.date, "TIMED_OUT"), (event.date + retryOffsets[0], "SUCCESS")] }
        return [(event.date, "SUCCESS")]
    }

    static func uuid(seed: UInt64, event: Event, otid: UInt64) -> String {
        let a = SeededRandom.hash(seed, 0x0001, otid, UInt64(bitPattern: event.date), UInt64(event.type.utf8.count))
        let b = SeededRandom.hash(seed, 0x0002, otid, UInt64(bitPattern: event.date), UInt64(event.transactionIndex))
        let hex = String(format: "%016llx%016llx", a, b & 0x0FFF_3FFF_FFFF_FFFF | 0x4000_8000_0000_0000)
        let c = Array(hex)
        return [c[0..<8], c[8..<12], c[12..<16], c[16..<20], c[20..<32]].map { String($0) }.joined(separator: "-")
    }
}
