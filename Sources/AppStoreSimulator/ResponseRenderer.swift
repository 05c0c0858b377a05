/// Renders Apple's verifyReceipt JSON (and the simulator's receipts) from the timeline model.
///
/// Every field is a string except `status`; every date comes in the three forms (`x`, `x_ms`,
/// `x_pst`); `in_app` and `latest_receipt_info` come in a hash order (not sorted), and
/// `pending_renewal_info` lists subscriptions in the reverse of their first appearance in
/// `latest_receipt_info`, so clients that match by index are caught.
public struct ResponseRenderer: Sendable {
    public let population: Population
    public let codec: ReceiptCodec
    let appReceipts: AppReceiptEncoder

    public init(population: Population) {
        self.population = population
        self.codec = ReceiptCodec(seed: population.seed)
        self.appReceipts = AppReceiptEncoder(seed: population.seed, anchor: population.anchor)
    }

    /// Receipt size (before base64) for a family at a creation time: grows with the transactions it
    /// covers and with each reissue (so every `latest_receipt` is longer than the receipt it answers).
    public func paddingLength(_ family: ReceiptFamily, createdAt: Int64, issueSequence: UInt32) -> Int {
        ReceiptFamily.baseReceiptBytes + family.bytesPerTransaction * family.transactionCount(at: createdAt)
            + 3 * Int(issueSequence)
    }

    private func token(_ family: ReceiptFamily, createdAt: Int64, issueSequence: UInt32) -> ReceiptToken {
        ReceiptToken(
            familyIndex: UInt32(family.index),
            originalTransactionId: family.primaryOriginalTransactionId,
            sandbox: family.sandbox,
            createdAt: createdAt,
            issueSequence: issueSequence
        )
    }

    /// A receipt in the simulator's private format (`ReceiptCodec`), as base64. verifyReceipt still answers it
    /// (tests build receipts for any instant with it); neither the export nor the answers write it any more.
    public func receipt(_ family: ReceiptFamily, createdAt: Int64, issueSequence: UInt32) -> [UInt8] {
        codec.encode(
            token(family, createdAt: createdAt, issueSequence: issueSequence),
            paddingLength: paddingLength(family, createdAt: createdAt, issueSequence: issueSequence)
        )
    }

    /// A PKCS#7 app receipt (`AppReceiptEncoder`), as base64: what the app stored, and Apple's `latest_receipt`.
    /// Indefinite-length BER for a quarter of the families (`AppReceiptEncoder.usesIndefiniteLength`), DER for the rest.
    public func appReceipt(_ family: ReceiptFamily, createdAt: Int64, issueSequence: UInt32) -> [UInt8] {
        Base64.encode(
            appReceipts.receipt(
                family,
                token: token(family, createdAt: createdAt, issueSequence: issueSequence),
                minimumLength: paddingLength(family, createdAt: createdAt, issueSequence: issueSequence),
                indefinite: AppReceiptEncoder.usesIndefiniteLength(seed: population.seed, familyIndex: family.index)
            )
        )
    }

    /// The receipt the app stored (stale: issued at `storedReceiptAt`), a PKCS#7 app receipt. A malformed one
    /// is still valid base64 (it passes an import's syntax check, as a corrupted blob an app saved would) but
    /// does not decode to a receipt: its leading bytes are zeroed, so Apple answers 21002.
    public func storedReceipt(_ family: ReceiptFamily) -> String {
        var bytes = appReceipt(family, createdAt: family.storedReceiptAt, issueSequence: family.storedIssueSequence)
        if family.malformedStoredReceipt {
            for i in 0..<min(8, bytes.count) { bytes[i] = UInt8(ascii: "A") }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The three forms of a date; `implausible` replaces the `_ms` value of the field it names.
    /// Written straight into the writer's bytes: a response has some hundred dates, and building three
    /// strings (and two suffixed keys) for each was most of the rendering time.
    private func date(_ w: inout JSONWriter, _ name: String, _ ms: Int64, _ implausible: ImplausibleValue? = nil) {
        w.key(name)
        w.quoted { SimTime.appendGMT(ms, to: &$0) }
        w.key(name, suffix: "_ms")
        if case .date(name, let bad)? = implausible {
            w.string(String(bad))
        } else {
            w.quotedDecimal(ms)
        }
        w.key(name, suffix: "_pst")
        w.quoted { SimTime.appendPacific(ms, to: &$0) }
    }

    /// One transaction object; `implausible` (for the family's target transaction only) replaces one value.
    /// Returns where in the writer's bytes the object is.
    @discardableResult
    private func transaction(
        _ w: inout JSONWriter,
        _ t: SimTransaction,
        _ implausible: ImplausibleValue? = nil,
        accountToken: String? = nil
    ) -> Range<Int> {
        func text(_ name: String, _ value: String?) {
            if case .text(name, let bad)? = implausible {
                w.field(name, bad)
            } else if let value {
                w.field(name, value)
            }
        }
        w.beginObject()
        let start = w.bytes.count - 1
        w.field("quantity", "1")
        text("product_id", t.product.productId)
        w.key("transaction_id")
        w.quotedDecimal(t.transactionId)
        w.key("original_transaction_id")
        w.quotedDecimal(t.originalTransactionId)
        date(&w, "purchase_date", t.purchase, implausible)
        date(&w, "original_purchase_date", t.originalPurchase, implausible)
        date(&w, "expires_date", t.expires, implausible)
        if let c = t.cancellation {
            date(&w, "cancellation_date", c)
            if let r = t.cancellationReason {
                w.key("cancellation_reason")
                w.quotedDecimal(Int64(r))
            }
        }
        w.key("web_order_line_item_id")
        w.quotedDecimal(t.webOrderLineItemId)
        w.field("is_trial_period", t.isTrial ? "true" : "false")
        w.field("is_in_intro_offer_period", t.isIntro ? "true" : "false")
        if t.isUpgraded { w.field("is_upgraded", "true") }
        text("offer_code_ref_name", t.offerCodeRefName)
        if t.offer?.type == 2, let id = t.offer?.identifier { w.field("promotional_offer_id", id) }
        if let accountToken { w.field("app_account_token", accountToken) }
        w.field("in_app_ownership_type", t.familyShared ? "FAMILY_SHARED" : "PURCHASED")
        w.field("subscription_group_identifier", t.product.groupId)
        w.endObject()
        return start..<w.bytes.count
    }

    /// Transactions in a deterministic but unsorted order.
    private func scrambled(_ txns: [SimTransaction], salt: UInt64) -> [SimTransaction] {
        txns.map { (SeededRandom.hash(salt, $0.transactionId), $0) }.sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// The status-0 body for `token` (already authenticated, family known) at `now`.
    public func renderSuccess(family: ReceiptFamily, token: ReceiptToken, now: Int64, excludeOld: Bool) -> [UInt8] {
        let salt = SeededRandom.hash(population.seed, UInt64(family.index), UInt64(bitPattern: now))
        let seen = transactions(family, seenAt: min(token.createdAt, now), now: now, excludeOld: excludeOld)
        // The transaction that carries the family's implausible value: the newest of its first subscription.
        let target = family.implausibleValue.flatMap { _ in
            family.subscriptions.first?.timeline(at: now).transactions.max { $0.purchase < $1.purchase }?.transactionId
        }
        let inApp = scrambled(seen.inApp, salt: salt ^ 1)
        let latest = scrambled(seen.latest, salt: salt ^ 2)
        let newCreated = max(now, token.createdAt)
        let newReceipt = appReceipt(family, createdAt: newCreated, issueSequence: token.issueSequence &+ 1)
        let accountToken = AppAccountToken.of(seed: population.seed, family: family)
        @discardableResult
        func write(_ w: inout JSONWriter, _ t: SimTransaction) -> Range<Int> {
            transaction(&w, t, t.transactionId == target ? family.implausibleValue : nil, accountToken: accountToken)
        }

        var w = JSONWriter(capacity: 2048 + newReceipt.count + latest.count * 1200 + inApp.count * 1200)
        w.beginObject()
        w.field("environment", family.sandbox ? "Sandbox" : "Production")
        w.key("receipt")
        let written = receiptObject(&w, family, token: token, now: now, inApp: inApp, writeTransaction: write)
        w.key("latest_receipt_info")
        w.beginArray()
        for t in latest {
            if let (same, range) = written[t.transactionId], same == t {
                w.copy(of: range)
            } else {
                write(&w, t)
            }
        }
        w.endArray()
        w.key("latest_receipt")
        w.rawString(newReceipt)
        pendingRenewalInfo(&w, latest: latest, timelines: seen.timelines)
        w.key("status")
        w.raw("0")
        w.endObject()
        return w.bytes
    }

    /// The transactions of `family` a response shows: those its receipt (created at `seenAt`) holds, for `in_app`;
    /// those that exist at `now`, for `latest_receipt_info` (only the newest of each subscription with
    /// `excludeOld`); and the timeline at `now` of each subscription that has any.
    private func transactions(
        _ family: ReceiptFamily,
        seenAt seen: Int64,
        now: Int64,
        excludeOld: Bool
    ) -> (inApp: [SimTransaction], latest: [SimTransaction], timelines: [(SubscriptionPlan, SubscriptionTimeline)]) {
        var inApp: [SimTransaction] = []
        var latest: [SimTransaction] = []
        var timelines: [(SubscriptionPlan, SubscriptionTimeline)] = []
        for plan in family.subscriptions {
            inApp += plan.timeline(at: seen).transactions
            let tl = plan.timeline(at: now)
            guard !tl.transactions.isEmpty else { continue }
            timelines.append((plan, tl))
            if excludeOld {
                if let last = tl.transactions.max(by: { $0.purchase < $1.purchase }) { latest.append(last) }
            } else {
                latest += tl.transactions
            }
        }
        return (inApp, latest, timelines)
    }

    /// The `receipt` object, its `in_app` written with `writeTransaction`; returns where in the writer's bytes each
    /// transaction of `in_app` is, by transaction id.
    private func receiptObject(
        _ w: inout JSONWriter,
        _ family: ReceiptFamily,
        token: ReceiptToken,
        now: Int64,
        inApp: [SimTransaction],
        writeTransaction: (inout JSONWriter, SimTransaction) -> Range<Int>
    ) -> [UInt64: (SimTransaction, Range<Int>)] {
        w.beginObject()
        w.field("receipt_type", family.sandbox ? "ProductionSandbox" : "Production")
        w.field("adam_id", family.sandbox ? "0" : "1" + String(population.seed % 100_000_000 + 400_000_000))
        w.field("app_item_id", family.sandbox ? "0" : "1" + String(population.seed % 100_000_000 + 400_000_000))
        w.field("bundle_id", family.bundleId)
        w.field("application_version", "412")
        w.field("download_id", family.sandbox ? "0" : String(80_000_000_000_000 + UInt64(family.index)))
        w.field("version_external_identifier", family.sandbox ? "0" : "848712345")
        date(&w, "receipt_creation_date", token.createdAt)
        date(&w, "request_date", now)
        date(&w, "original_purchase_date", family.appDownloadedAt)
        w.field("original_application_version", family.sandbox ? "1.0" : "301")
        w.key("in_app")
        w.beginArray()
        // Most transactions of latest_receipt_info are also in in_app, unchanged: their objects are copied
        // from there rather than written again (the same bytes; a changed one, e.g. refunded since the
        // receipt was created, is written anew).
        var written: [UInt64: (SimTransaction, Range<Int>)] = [:]
        written.reserveCapacity(inApp.count)
        for t in inApp { written[t.transactionId] = (t, writeTransaction(&w, t)) }
        w.endArray()
        w.endObject()
        return written
    }

    /// `pending_renewal_info`: one object per subscription, in the reverse of their first appearance in `latest`
    /// (the order of `latest_receipt_info`).
    private func pendingRenewalInfo(
        _ w: inout JSONWriter,
        latest: [SimTransaction],
        timelines: [(SubscriptionPlan, SubscriptionTimeline)]
    ) {
        var order: [UInt64] = []
        for t in latest where !order.contains(t.originalTransactionId) { order.append(t.originalTransactionId) }
        order.reverse()
        w.key("pending_renewal_info")
        w.beginArray()
        for otid in order {
            guard let (plan, tl) = timelines.first(where: { $0.0.originalTransactionId == otid }) else { continue }
            w.beginObject()
            if let intent = tl.expirationIntent { w.field("expiration_intent", String(intent)) }
            w.field("auto_renew_product_id", tl.autoRenewProductId)
            if tl.expirationIntent != nil || tl.inBillingRetry {
                w.field("is_in_billing_retry_period", tl.inBillingRetry ? "1" : "0")
            }
            w.field("product_id", tl.productId)
            w.key("original_transaction_id")
            w.quotedDecimal(plan.originalTransactionId)
            w.field("auto_renew_status", tl.autoRenewStatus ? "1" : "0")
            if let grace = tl.gracePeriodExpires { date(&w, "grace_period_expires_date", grace) }
            w.endObject()
        }
        w.endArray()
    }

    /// `{"status": N}` (with `environment` when Apple knows it), as Apple sends for errors.
    public static func statusBody(_ status: Int, environment: String? = nil) -> [UInt8] {
        var w = JSONWriter(capacity: 64)
        w.beginObject()
        if let environment { w.field("environment", environment) }
        w.key("status")
        w.int(Int64(status))
        w.endObject()
        return w.bytes
    }
}
