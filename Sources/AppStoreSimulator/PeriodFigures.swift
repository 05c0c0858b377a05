/// One currency's money truth for a period (docs/simulator.md, "Export files"): paid purchases made after the
/// period's start and at or before its end, and revocations dated within it, full and prorated apart.
struct PeriodFigures: Sendable {
    var paidTransactions: Int64 = 0
    var gross: Int64 = 0
    var fullRefunds: Int64 = 0
    var refundedFull: Int64 = 0
    var proratedRefunds: Int64 = 0
    var refundedProrated: Int64 = 0

    /// Counts one production transaction (`refunded`: its refunded amount, 0 when not revoked).
    mutating func add(
        price: Int64,
        purchase: Int64,
        revocation: (date: Int64, type: String, percentage: Int64)?,
        refunded: Int64,
        after start: Int64,
        through end: Int64
    ) {
        guard price > 0 else { return }
        if purchase > start, purchase <= end {
            paidTransactions += 1
            gross += price
        }
        guard let revocation, revocation.date > start, revocation.date <= end else { return }
        if revocation.type == "REFUND_PRORATED" {
            proratedRefunds += 1
            refundedProrated += refunded
        } else {
            fullRefunds += 1
            refundedFull += refunded
        }
    }

    func write(into w: inout JSONWriter) {
        w.beginObject()
        for (key, value) in [
            ("paid_transactions", paidTransactions), ("gross", gross), ("full_refunds", fullRefunds),
            ("refunded_full", refundedFull), ("prorated_refunds", proratedRefunds),
            ("refunded_prorated", refundedProrated), ("refunded", refundedFull + refundedProrated),
            ("net", gross - refundedFull - refundedProrated),
        ] {
            w.key(key)
            w.int(value)
        }
        w.endObject()
    }
}
