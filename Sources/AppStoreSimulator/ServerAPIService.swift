import NIOCore
import Synchronization

/// The App Store Server API without the HTTP (docs/simulator.md, "The Server API"): an endpoint, an
/// environment, a transaction id and a query in; HTTP status, Apple's `errorCode` and a JSON body out.
///
/// Answers come from the same population and timelines as verifyReceipt. A transaction id is known in its own
/// environment once it exists (purchased at or before `now`); ids of another app's receipt and of deleted
/// accounts are unknown (4040010), as is a sandbox id asked of production and the reverse. Signed answers are
/// cached per (endpoint, environment, id, query, now), so a frozen clock signs each payload once.
public final class ServerAPIService: Sendable {
    public enum Endpoint: String, Sendable, CaseIterable {
        case subscriptions, transactions, history
        case refundHistory = "refund_history"
        case notificationHistory = "notification_history"
        case orderLookup = "order_lookup"
    }

    public struct Outcome: Sendable {
        public var httpStatus: Int
        public var errorCode: Int?
        public var body: ByteBuffer
    }

    struct CacheKey: Hashable {
        var endpoint: Endpoint
        var sandbox: Bool
        var id: UInt64
        var query: String
        var now: Int64
        var fault: SignatureFault?
    }

    public let population: Population
    public let identity: ServerAPIIdentity
    public let renderer: ServerAPIRenderer
    public let clock: SimClock
    /// Subscription number (original id minus the population's base, over 10,000) to family and plan indices.
    private let plans: [UInt64: (family: Int, plan: Int)]
    /// One-time purchase id to its index in `population.oneTimePurchases`.
    let oneTime: [UInt64: Int]
    /// The order ids of the world's transactions (Look Up Order ID).
    public let orderIds: OrderIdCodec
    /// Signed answers and their total size; cleared when either limit is reached.
    private let cache = Mutex<(entries: [CacheKey: Outcome], bytes: Int)>(([:], 0))
    private static let cacheLimit = 50_000
    private static let cacheByteLimit = 256 * 1024 * 1024

    /// Share of subscriptions answered with a signature fault every time (`SignatureFault.forSubscription`).
    public let faultySubscriptionRate: Double

    public init(
        population: Population,
        identity: ServerAPIIdentity,
        clock: SimClock,
        faultySubscriptionRate: Double = 0
    ) {
        self.faultySubscriptionRate = faultySubscriptionRate
        self.population = population
        self.identity = identity
        self.renderer = ServerAPIRenderer(population: population, identity: identity)
        self.clock = clock
        self.orderIds = OrderIdCodec(seed: population.seed)
        var plans: [UInt64: (Int, Int)] = [:]
        for (f, family) in population.families.enumerated() {
            for (p, plan) in family.subscriptions.enumerated() { plans[plan.originalTransactionId] = (f, p) }
        }
        self.plans = plans
        self.oneTime = Dictionary(population.oneTimePurchases.enumerated().map { ($1.transactionId, $0) }) { a, _ in a }
    }

    /// The customer of one-time purchase `id` (its first subscription's first transaction), if Apple would know
    /// the purchase in that environment at `now`.
    func oneTimeLocation(_ id: UInt64, sandbox: Bool, now: Int64) -> ServerAPIRenderer.Location? {
        guard let k = oneTime[id], population.oneTimePurchases[k].purchase <= now else { return nil }
        let family = population.families[population.oneTimePurchases[k].familyIndex]
        guard family.sandbox == sandbox, let plan = family.subscriptions.first else { return nil }
        return ServerAPIRenderer.Location(family: family, plan: plan, index: 0)
    }

    static func buffer(_ bytes: [UInt8]) -> ByteBuffer {
        var b = ByteBufferAllocator().buffer(capacity: bytes.count)
        b.writeBytes(bytes)
        return b
    }

    public static func error(_ code: Int, httpStatus: Int? = nil) -> Outcome {
        // Apple's codes start with the HTTP status: 4000006 is a 400, 4040010 a 404, 5000001 a 500.
        let status = httpStatus ?? code / 10_000
        return Outcome(httpStatus: status, errorCode: code, body: buffer(ServerAPIRenderer.errorBody(code)))
    }

    /// Parses a path segment as a transaction id: 1 to 19 decimal digits (else 4000006).
    static func transactionId(_ text: Substring) -> UInt64? {
        guard !text.isEmpty, text.count <= 19, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        return UInt64(text)
    }

    /// The family, subscription and index of `id` as seen from `sandbox` at `now`, if Apple would know it there.
    public func locate(_ id: UInt64, sandbox: Bool, now: Int64) -> ServerAPIRenderer.Location? {
        let original = id - id % 10_000
        guard let (f, p) = plans[original] else { return nil }
        let family = population.families[f]
        guard family.sandbox == sandbox, family.bundleId == population.bundleId, family.fixedStatus != 21010 else {
            return nil
        }
        let plan = family.subscriptions[p]
        let index = Int(id - original)
        guard index < plan.timeline(at: now).transactions.count else { return nil }
        return ServerAPIRenderer.Location(family: family, plan: plan, index: index)
    }

    /// Answers one request. `idText` is the path's transaction id; `query` the raw query string (may be empty).
    /// `fault` signs every JWS of the answer with that defect.
    public func answer(
        _ endpoint: Endpoint,
        sandbox: Bool,
        idText: Substring,
        query: Substring,
        fault: SignatureFault? = nil
    ) -> Outcome {
        guard let id = Self.transactionId(idText) else { return Self.error(4_000_006) }
        let now = clock.now()
        // A faulty subscription's answers are always faulty (the first faulty one of the customer's, for
        // answers that cover several).
        var fault = fault
        if fault == nil, faultySubscriptionRate > 0, let (f, _) = plans[id - id % 10_000] {
            fault = SignatureFault.forFamily(
                population.families[f],
                seed: population.seed,
                rate: faultySubscriptionRate
            )
        }
        let key = CacheKey(
            endpoint: endpoint,
            sandbox: sandbox,
            id: id,
            query: String(query),
            now: now,
            fault: fault
        )
        if let hit = cache.withLock({ $0.entries[key] }) { return hit }
        guard let location = locate(id, sandbox: sandbox, now: now) ?? oneTimeLocation(id, sandbox: sandbox, now: now)
        else { return Self.error(4_040_010) }
        let outcome: Outcome
        switch endpoint {
        case .subscriptions: outcome = subscriptionStatuses(location, query: query, now: now, fault: fault)
        case .transactions:
            if let k = oneTime[id] {
                var w = JSONWriter(capacity: 2048)
                w.beginObject()
                let payload = renderer.oneTimePayload(population.oneTimePurchases[k], signedDate: now)
                w.field("signedTransactionInfo", identity.sign(payload: payload, fault: fault))
                w.endObject()
                outcome = ok(w.bytes)
            } else {
                outcome = transactionInfo(location, now: now, fault: fault)
            }
        case .history: outcome = history(location, query: query, now: now, fault: fault)
        case .refundHistory: outcome = refundHistory(location, query: query, now: now, fault: fault)
        case .notificationHistory, .orderLookup: outcome = Self.error(4_040_010)
        }
        cache.withLock { c in
            if c.entries.count >= Self.cacheLimit || c.bytes >= Self.cacheByteLimit {
                c.entries.removeAll(keepingCapacity: true)
                c.bytes = 0
            }
            c.entries[key] = outcome
            c.bytes += outcome.body.readableBytes
        }
        return outcome
    }

    private func ok(_ bytes: [UInt8]) -> Outcome { Outcome(httpStatus: 200, errorCode: nil, body: Self.buffer(bytes)) }

    /// Get Transaction Info: `{"signedTransactionInfo": JWS}`.
    func transactionInfo(_ location: ServerAPIRenderer.Location, now: Int64, fault: SignatureFault?) -> Outcome {
        let tl = location.plan.timeline(at: now)
        let t = tl.transactions[location.index]
        let payload = renderer.transactionPayload(t, plan: location.plan, family: location.family, signedDate: now)
        var w = JSONWriter(capacity: 2048)
        w.beginObject()
        w.field("signedTransactionInfo", identity.sign(payload: payload, fault: fault))
        w.endObject()
        return ok(w.bytes)
    }

    /// Get All Subscription Statuses: every subscription of the customer (the family), grouped by
    /// subscription group, each with its latest transaction and renewal info; `status=N` filters (repeatable).
    func subscriptionStatuses(
        _ location: ServerAPIRenderer.Location,
        query: Substring,
        now: Int64,
        fault: SignatureFault?
    ) -> Outcome {
        var wanted: Set<Int> = []
        for pair in query.split(separator: "&") where pair.hasPrefix("status=") {
            guard let n = Int(pair.dropFirst(7)), (1...5).contains(n) else { return Self.error(4_000_031) }
            wanted.insert(n)
        }
        let family = location.family
        var groups: [(String, [(Int, SubscriptionPlan, SubscriptionTimeline)])] = []
        for plan in family.subscriptions {
            let tl = plan.timeline(at: now)
            guard let latest = tl.transactions.max(by: { $0.purchase < $1.purchase }) else { continue }
            let status = ServerAPIRenderer.status(tl, now: now)
            if !wanted.isEmpty && !wanted.contains(status) { continue }
            let group = latest.product.groupId
            if let i = groups.firstIndex(where: { $0.0 == group }) {
                groups[i].1.append((status, plan, tl))
            } else {
                groups.append((group, [(status, plan, tl)]))
            }
        }
        var w = JSONWriter(capacity: 4096)
        w.beginObject()
        w.field("environment", ServerAPIRenderer.environment(family))
        w.field("bundleId", family.bundleId)
        if !family.sandbox {
            w.key("appAppleId")
            w.int(identity.appAppleId)
        }
        w.key("data")
        w.beginArray()
        for (group, entries) in groups {
            w.beginObject()
            w.field("subscriptionGroupIdentifier", group)
            w.key("lastTransactions")
            w.beginArray()
            for (status, plan, tl) in entries {
                // The non-nil latest was checked above.
                let latest = tl.transactions.max { $0.purchase < $1.purchase }!
                w.beginObject()
                w.key("status")
                w.int(Int64(status))
                w.field("originalTransactionId", String(plan.originalTransactionId))
                w.field(
                    "signedTransactionInfo",
                    identity.sign(
                        payload: renderer.transactionPayload(latest, plan: plan, family: family, signedDate: now),
                        fault: fault
                    )
                )
                w.field(
                    "signedRenewalInfo",
                    identity.sign(
                        payload: renderer.renewalPayload(tl, plan: plan, family: family, signedDate: now),
                        fault: fault
                    )
                )
                w.endObject()
            }
            w.endArray()
            w.endObject()
        }
        w.endArray()
        w.endObject()
        return ok(w.bytes)
    }

    /// Every transaction of the customer (all subscriptions of the family) at `now`.
    private func customerTransactions(_ family: ReceiptFamily, now: Int64) -> [(SimTransaction, SubscriptionPlan)] {
        family.subscriptions.flatMap { plan in plan.timeline(at: now).transactions.map { ($0, plan) } }
    }

    /// A page of signed transactions: `revision`, `hasMore`, `signedTransactions`, and the app's ids.
    private func page(
        _ items: [() -> [UInt8]],
        offset: Int,
        nextToken: String,
        family: ReceiptFamily,
        now: Int64,
        fault: SignatureFault?
    ) -> Outcome {
        let end = min(items.count, offset + HistoryQuery.pageSize)
        var w = JSONWriter(capacity: 40_000)
        w.beginObject()
        w.field("revision", nextToken)
        w.key("hasMore")
        w.bool(end < items.count)
        w.field("bundleId", family.bundleId)
        if !family.sandbox {
            w.key("appAppleId")
            w.int(identity.appAppleId)
        }
        w.field("environment", ServerAPIRenderer.environment(family))
        w.key("signedTransactions")
        w.beginArray()
        if offset < end {
            for payload in items[offset..<end] { w.string(identity.sign(payload: payload(), fault: fault)) }
        }
        w.endArray()
        w.endObject()
        return ok(w.bytes)
    }

    /// Get Transaction History v2: the customer's transactions filtered by the query, by purchase date
    /// (then id), 20 a page; `revision` pages and is refused (4000005) with any other query.
    func history(
        _ location: ServerAPIRenderer.Location,
        query: Substring,
        now: Int64,
        fault: SignatureFault?
    )
        -> Outcome
    {
        guard let q = HistoryQuery(query) else { return Self.error(4_000_005, httpStatus: 400) }
        let family = location.family
        let scope = UInt64(family.index) << 1 | (family.sandbox ? 1 : 0)
        var offset = 0
        if let revision = q.revision {
            guard
                let o = HistoryQuery.offset(
                    of: revision,
                    key: population.seed,
                    scope: scope,
                    canonical: q.canonical
                )
            else { return Self.error(4_000_005) }
            offset = o
        }
        var items = customerTransactions(family, now: now).filter { q.matches($0.0) }
        items.sort { a, b in
            a.0.purchase != b.0.purchase ? a.0.purchase < b.0.purchase : a.0.transactionId < b.0.transactionId
        }
        if q.descending { items.reverse() }
        let next = min(items.count, offset + HistoryQuery.pageSize)
        let token = HistoryQuery.token(offset: next, key: population.seed, scope: scope, canonical: q.canonical)
        let payloads = items.map { t, plan in
            { self.renderer.transactionPayload(t, plan: plan, family: family, signedDate: now) }
        }
        return page(payloads, offset: offset, nextToken: token, family: family, now: now, fault: fault)
    }

    /// Get Refund History v2: the customer's refunded transactions (one-time purchases too) by revocation date, 20 a page.
    func refundHistory(
        _ location: ServerAPIRenderer.Location,
        query: Substring,
        now: Int64,
        fault: SignatureFault?
    ) -> Outcome {
        var revision: String?
        for pair in query.split(separator: "&") {
            guard pair.hasPrefix("revision=") else { return Self.error(4_000_005, httpStatus: 400) }
            revision = String(pair.dropFirst("revision=".count))
        }
        let family = location.family
        let scope = UInt64(family.index) << 1 | (family.sandbox ? 1 : 0) | 1 << 62
        var offset = 0
        if let revision {
            guard let o = HistoryQuery.offset(of: revision, key: population.seed, scope: scope, canonical: "")
            else { return Self.error(4_000_005) }
            offset = o
        }
        // Every refunded in-app purchase of the customer: subscription transactions and one-time purchases.
        var items: [(date: Int64, id: UInt64, payload: () -> [UInt8])] = []
        for (t, plan) in customerTransactions(family, now: now) where t.isRefunded {
            items.append(
                (
                    t.cancellation ?? 0, t.transactionId,
                    { self.renderer.transactionPayload(t, plan: plan, family: family, signedDate: now) }
                )
            )
        }
        for item in population.oneTimePurchases where item.familyIndex == family.index && item.isRefunded(at: now) {
            items.append(
                (item.refundedAt ?? 0, item.transactionId, { self.renderer.oneTimePayload(item, signedDate: now) })
            )
        }
        items.sort { ($0.date, $0.id) < ($1.date, $1.id) }
        let next = min(items.count, offset + HistoryQuery.pageSize)
        let token = HistoryQuery.token(offset: next, key: population.seed, scope: scope, canonical: "")
        return page(items.map(\.payload), offset: offset, nextToken: token, family: family, now: now, fault: fault)
    }

    /// Get Notification History: the notifications of the window (by first send attempt), oldest first,
    /// filtered by type/subtype or by a customer's transaction id, 20 a page; `paginationToken` works only
    /// with the same body (else 4000014).
    public func notificationHistory(
        body: [UInt8],
        sandbox: Bool,
        query: Substring,
        fault: SignatureFault? = nil
    )
        -> Outcome
    {
        let now = clock.now()
        let request: NotificationHistory.Request
        switch NotificationHistory.parse(body, now: now, sandbox: sandbox) {
        case .failure(let e): return Self.error(e.code)
        case .success(let r): request = r
        }
        let scope: UInt64 = sandbox ? 3 << 61 : 2 << 61
        var offset = 0
        for pair in query.split(separator: "&") where pair.hasPrefix("paginationToken=") {
            guard
                let o = HistoryQuery.offset(
                    of: String(pair.dropFirst("paginationToken=".count)),
                    key: population.seed,
                    scope: scope,
                    canonical: request.canonical
                )
            else { return Self.error(4_000_014) }
            offset = o
        }
        guard let events = historyEvents(request, sandbox: sandbox, now: now) else { return Self.error(4_040_010) }
        return ok(historyPage(events, offset: offset, scope: scope, canonical: request.canonical, fault: fault))
    }

    /// The window's notifications that pass the request's filters, each with its send attempts, oldest first; nil
    /// for a transaction id no customer has.
    private func historyEvents(
        _ request: NotificationHistory.Request,
        sandbox: Bool,
        now: Int64
    )
        -> [(NotificationHistory.Event, [(Int64, String)])]?
    {
        var families: [ReceiptFamily]
        var customer: Int?
        if let id = request.transactionId {
            guard
                let location = locate(id, sandbox: sandbox, now: now) ?? oneTimeLocation(id, sandbox: sandbox, now: now)
            else { return nil }
            families = [location.family]
            customer = location.family.index
        } else {
            families = population.families.filter {
                $0.sandbox == sandbox && $0.bundleId == population.bundleId && $0.fixedStatus != 21010
            }
        }
        var all: [NotificationHistory.Event] = []
        for family in families {
            for p in family.subscriptions.indices {
                all += NotificationHistory.events(family: family, planIndex: p, now: now)
            }
        }
        all += NotificationHistory.populationEvents(population, family: customer, sandbox: sandbox, now: now)
        var events: [(NotificationHistory.Event, [(Int64, String)])] = []
        for e in all where e.date >= request.startDate && e.date < request.endDate {
            if let type = request.notificationType, type != e.type { continue }
            if let sub = request.notificationSubtype, sub != e.subtype { continue }
            let key = NotificationHistory.key(of: e, population)
            let attempts = NotificationHistory.attempts(seed: population.seed, event: e, otid: key)
            if request.onlyFailures && attempts.last?.1 == "SUCCESS" { continue }
            events.append((e, attempts))
        }
        events.sort { a, b in
            (a.0.date, a.0.family, a.0.plan, a.0.type) < (b.0.date, b.0.family, b.0.plan, b.0.type)
        }
        return events
    }

    /// One page of Get Notification History's answer: 20 events from `offset`, and the token of the next page.
    private func historyPage(
        _ events: [(NotificationHistory.Event, [(Int64, String)])],
        offset: Int,
        scope: UInt64,
        canonical: String,
        fault: SignatureFault?
    ) -> [UInt8] {
        let end = min(events.count, offset + HistoryQuery.pageSize)
        var w = JSONWriter(capacity: 80_000)
        w.beginObject()
        w.key("notificationHistory")
        w.beginArray()
        if offset < end {
            for (e, attempts) in events[offset..<end] {
                w.beginObject()
                w.field("signedPayload", identity.sign(payload: notificationPayload(e), fault: fault))
                w.key("sendAttempts")
                w.beginArray()
                for (date, result) in attempts {
                    w.beginObject()
                    w.key("attemptDate")
                    w.int(date)
                    w.field("sendAttemptResult", result)
                    w.endObject()
                }
                w.endArray()
                w.endObject()
            }
        }
        w.endArray()
        w.key("hasMore")
        w.bool(end < events.count)
        w.field(
            "paginationToken",
            HistoryQuery.token(
                offset: end,
                key: population.seed,
                scope: scope,
                canonical: canonical
            )
        )
        w.endObject()
        return w.bytes
    }

    /// The signed notification's payload (`ResponseBodyV2DecodedPayload`), as of the event's instant: exactly one
    /// of `data`, `summary`, `appData` or, for the undocumented type, its own key.
    func notificationPayload(_ e: NotificationHistory.Event) -> [UInt8] {
        var w = JSONWriter(capacity: 4096)
        w.beginObject()
        w.field("notificationType", e.type)
        w.optionalField("subtype", e.subtype)
        let key = NotificationHistory.key(of: e, population)
        w.field("notificationUUID", NotificationHistory.uuid(seed: population.seed, event: e, otid: key))
        w.field("version", "2.0")
        w.key("signedDate")
        w.int(e.date)
        switch e.kind {
        case .summary(let m): renderer.writeSummary(population.massExtensions[m], into: &w)
        case .notice(let k): renderer.writeNotice(population.notices[k], into: &w)
        case .oneTime(let k):
            let item = population.oneTimePurchases[k]
            writeData(population.families[e.family], type: e.type, into: &w) { w in
                w.field(
                    "signedTransactionInfo",
                    identity.sign(payload: renderer.oneTimePayload(item, signedDate: e.date))
                )
            }
        case .subscription: writeSubscriptionData(e, into: &w)
        }
        w.endObject()
        return w.bytes
    }

    /// `data` {appAppleId, bundleId, bundleVersion, environment, what `signed` writes, consumptionRequestReason}.
    private func writeData(
        _ family: ReceiptFamily,
        type: String,
        into w: inout JSONWriter,
        _ signed: (inout JSONWriter) -> Void
    ) {
        w.key("data")
        w.beginObject()
        if !family.sandbox {
            w.key("appAppleId")
            w.int(identity.appAppleId)
        }
        w.field("bundleId", family.bundleId)
        w.field("bundleVersion", "412")
        w.field("environment", ServerAPIRenderer.environment(family))
        signed(&w)
        if type == "CONSUMPTION_REQUEST" {
            let reasons = ["UNINTENDED_PURCHASE", "FULFILLMENT_ISSUE", "UNSATISFIED_WITH_PURCHASE", "LEGAL", "OTHER"]
            w.field("consumptionRequestReason", reasons[family.index % reasons.count])
        }
        w.endObject()
    }

    private func writeSubscriptionData(_ e: NotificationHistory.Event, into w: inout JSONWriter) {
        let family = population.families[e.family]
        let plan = family.subscriptions[e.plan]
        let tl = plan.timeline(at: e.date)
        let t = tl.transactions.first { $0.index == e.transactionIndex } ?? tl.transactions.last
        writeData(family, type: e.type, into: &w) { w in
            if let t {
                w.field(
                    "signedTransactionInfo",
                    identity.sign(
                        payload: renderer.transactionPayload(t, plan: plan, family: family, signedDate: e.date)
                    )
                )
            }
            w.field(
                "signedRenewalInfo",
                identity.sign(payload: renderer.renewalPayload(tl, plan: plan, family: family, signedDate: e.date))
            )
            w.key("status")
            w.int(Int64(ServerAPIRenderer.status(tl, now: e.date)))
        }
    }
}
