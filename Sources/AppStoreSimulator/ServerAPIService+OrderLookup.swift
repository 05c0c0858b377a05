/// Look Up Order ID (`GET /inApps/v1/lookup/{orderId}`, docs/simulator.md, "Look Up Order ID").
extension ServerAPIService {
    /// `{"status": 0, "signedTransactions": [JWS]}` for the order of a production transaction of this app purchased
    /// at or before the clock (the transaction of that order, signed like Get Transaction Info's); `{"status": 1}`
    /// for any other order id, and always in the sandbox, where Apple has no such endpoint. An id longer than 64
    /// characters or holding anything but letters and digits is a bad request (400, 4000000). `fault` signs the
    /// transaction with that defect; a faulty subscription's transactions are always faulty.
    public func orderLookup(_ orderIdText: Substring, sandbox: Bool, fault: SignatureFault? = nil) -> Outcome {
        let plausible =
            !orderIdText.isEmpty && orderIdText.count <= 64
            && orderIdText.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 | 0x20 >= 97 && $0 | 0x20 <= 122) }
        guard plausible else { return Self.error(4_000_000) }
        let now = clock.now()
        guard !sandbox, let id = orderIds.transactionId(of: orderIdText), let jws = signedOrder(id, now: now, fault)
        else { return Self.invalidOrder }
        var w = JSONWriter(capacity: 2048)
        w.beginObject()
        w.key("status")
        w.int(0)
        w.key("signedTransactions")
        w.beginArray()
        w.string(jws)
        w.endArray()
        w.endObject()
        return Outcome(httpStatus: 200, errorCode: nil, body: Self.buffer(w.bytes))
    }

    static var invalidOrder: Outcome {
        Outcome(httpStatus: 200, errorCode: nil, body: buffer(Array(#"{"status":1}"#.utf8)))
    }

    /// The signed transaction `id` when Apple would know it in production at `now`.
    private func signedOrder(_ id: UInt64, now: Int64, _ fault: SignatureFault?) -> String? {
        if let k = oneTime[id] {
            guard oneTimeLocation(id, sandbox: false, now: now) != nil else { return nil }
            let payload = renderer.oneTimePayload(population.oneTimePurchases[k], signedDate: now)
            return identity.sign(payload: payload, fault: fault)
        }
        guard let location = locate(id, sandbox: false, now: now) else { return nil }
        let faulty =
            fault
            ?? SignatureFault.forFamily(location.family, seed: population.seed, rate: faultySubscriptionRate)
        let t = location.plan.timeline(at: now).transactions[location.index]
        let payload = renderer.transactionPayload(t, plan: location.plan, family: location.family, signedDate: now)
        return identity.sign(payload: payload, fault: faulty)
    }
}
