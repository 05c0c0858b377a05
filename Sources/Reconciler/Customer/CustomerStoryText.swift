import CivilTime
import ReceiptDomain

/// `customer`'s text for a terminal (docs/customer.md, "Reading the text"): a heading for the customer, Apple's
/// order when asked by order id, then each subscription's row, checks, ledger, notifications, history and events.
/// The same facts as the JSON, fewer columns.
public enum CustomerStoryText {
    public static func render(_ story: CustomerStory) -> String {
        var lines = [
            "Customer \(story.userIds.joined(separator: ", ")) (asked by \(story.query.kind) \(story.query.value)): "
                + "\(story.subscriptions.count) subscription\(story.subscriptions.count == 1 ? "" : "s")"
        ]
        if let order = story.order {
            lines.append("")
            lines.append("Apple's order \(story.query.value): \(order.count) transaction(s), signatures verified")
            lines += order.map { "  " + orderLine($0) }
        }
        for subscription in story.subscriptions {
            lines.append("")
            lines += section(subscription)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func orderLine(_ t: ReceiptTransaction) -> String {
        var line = "\(t.transactionId) of \(t.originalTransactionId) \(t.productId)"
        line += " purchased \(t.purchaseDate.map(RFC3339.string) ?? "-")"
        line += " expires \(t.expiresDate.map(RFC3339.string) ?? "-")"
        if let price = t.signedFacts?.priceMilliunits {
            line += " \(money(price)) \(t.signedFacts?.currency ?? "")"
        }
        if let revoked = t.cancellationDate { line += " REVOKED \(RFC3339.string(revoked))" }
        return line
    }

    static func section(_ s: CustomerSubscription) -> [String] {
        let r = s.row
        var lines = [
            "Subscription \(r.text("original_transaction_id")) (row \(r.text("id")), user \(r.text("user_id")), "
                + "\(r.text("bundle_id")), \(r.text("environment")))",
            "  state \(r.text("state")), expires \(r.text("expires_at")), product \(r.text("product_id"))",
            "  auto-renew \(r.text("auto_renew")) (to \(r.text("auto_renew_product_id"))), grace period until "
                + "\(r.text("grace_period_expires_at")), billing retry \(r.text("in_billing_retry")), "
                + "revoked \(r.text("revoked_at"))",
            "  app account token \(r.text("app_account_token")), currency \(r.text("currency")), renews at "
                + "\(milliunits(r["renewal_price_milliunits"])) \(r.text("renewal_currency"))",
        ]
        if let c = s.checks {
            lines.append(
                "  last check \(c.text("last_verified_at")): \(c.text("last_verify_status")), Apple status "
                    + "\(c.text("last_apple_status")), error \(c.text("last_error")), next check \(c.text("next_check_at"))"
            )
        } else {
            lines.append("  never checked")
        }
        lines.append("  Transactions (\(s.transactions.count)):")
        lines += s.transactions.map { "    " + transactionLine($0) }
        lines.append("  Notifications (\(s.notifications.count)):")
        lines += s.notifications.map {
            "    \($0.text("signed_date")) \($0.text("notification_type")) \($0.text("subtype")) "
                + "(\($0.text("notification_uuid")), \($0.text("source")))"
        }
        lines.append("  History (\(s.history.count) runs):")
        lines += s.history.map { "    " + historyLine($0) }
        lines.append("  Events (\(s.events.count)):")
        lines += s.events.map { "    " + eventLine($0) }
        return lines
    }

    /// `--refresh`'s lines: for each subscription, what Apple says now against the stored row (a dry run: nothing
    /// was written).
    public static func refreshLines(_ items: [CustomerRecord]) -> [String] {
        var lines = ["", "Asked Apple now (a dry run: nothing written to the subscriptions):"]
        for item in items {
            var changes: [String] = []
            for (old, new, name) in [
                ("previous_state", "new_state", "state"), ("previous_expires_at", "new_expires_at", "expires"),
                ("previous_product_id", "product_id", "product"), ("previous_auto_renew", "auto_renew", "auto-renew"),
            ] where item[new] != .null && item[old] != item[new] {
                changes.append("\(name) \(item.text(old)) -> \(item.text(new))")
            }
            let outcome = item.text(item["outcome"] == .null ? "status" : "outcome")
            let what = changes.isEmpty ? "no change" : changes.joined(separator: ", ")
            let why = item["reason"] == .null ? "" : " (\(item.text("reason")))"
            lines.append("  \(item.text("original_transaction_id")): \(outcome): \(what)\(why)")
        }
        return lines
    }

    /// `#2 2026-11-22T02:30:00Z renewal transaction 1002 9.99 USD (run 3, found by notification)`.
    static func eventLine(_ e: CustomerRecord) -> String {
        var line = "#\(e.text("sequence")) \(e.text("seen_at")) \(e.text("kind"))"
        if e["reason"] != .null { line += " (\(e.text("reason")))" }
        if e["transaction_id"] != .null { line += " transaction \(e.text("transaction_id"))" }
        if e["price_milliunits"] != .null { line += " \(milliunits(e["price_milliunits"])) \(e.text("currency"))" }
        if e["occurred_at"] != .null { line += " at Apple \(e.text("occurred_at"))" }
        return line + " (run \(e.text("run_id")), found by \(e.text("source")))"
    }

    static func transactionLine(_ t: CustomerRecord) -> String {
        var line = "\(t.text("purchase_date")) \(t.text("kind")) \(t.text("transaction_id")) \(t.text("product_id"))"
        line += " expires \(t.text("expires_date")) \(milliunits(t["price_milliunits"])) \(t.text("currency"))"
        if t["offer"] != .null { line += " offer \(t.text("offer"))" }
        if t["ownership_type"] == .string("FAMILY_SHARED") { line += " family-shared" }
        if t["revocation_date"] != .null || t["cancellation_date"] != .null {
            line +=
                " REFUNDED/REVOKED \(t.text(t["revocation_date"] != .null ? "revocation_date" : "cancellation_date"))"
            line += " (\(t.text("revocation_type")), \(milliunits(t["revocation_percentage"], unit: 1000))%)"
        }
        return line
    }

    static func historyLine(_ i: CustomerRecord) -> String {
        var line = "run \(i.text("run_id")) \(i.text("mode"))\(i["dry_run"] == .bool(true) ? " (dry run)" : "")"
        line += " as of \(i.text("as_of")), due \(i.text("due_reason")): \(i.text("outcome"))"
        line += " \(i.text("previous_state")) -> \(i.text("new_state")),"
        line += " expires \(i.text("previous_expires_at")) -> \(i.text("new_expires_at"))"
        if i["reason"] != .null { line += " (\(i.text("reason")))" }
        return line
    }

    /// Milliunits as a decimal amount (9990 is 9.99, 1500000 is 1500); `-` for NULL.
    static func milliunits(_ value: ExplainJSON, unit: Int64 = 1000) -> String {
        guard case .integer(let amount) = value else { return "-" }
        return money(amount, unit: unit)
    }

    static func money(_ amount: Int64, unit: Int64 = 1000) -> String {
        let whole = amount / unit
        var fraction = String(abs(amount % unit))
        while fraction.count < String(unit).count - 1 { fraction = "0" + fraction }
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return fraction.isEmpty ? String(whole) : "\(whole).\(fraction)"
    }
}
