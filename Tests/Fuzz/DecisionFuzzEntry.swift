// libFuzzer entry point for the decision path with extreme values: the input bytes choose numbers
// (Int64 and Int32 edges, values near Int64.max, the bounds of docs/decision-rules.md "Bounds on Apple's
// values", floats, padded and signed text) and strings (NUL, over-long, quotes, non-ASCII) for every field
// the engine reads; the answer is written as JSON, then parsed, classified and decided against stored rows
// that hold whatever PostgreSQL can hold. Not a SwiftPM target: scripts/fuzz compiles this file with
// Sources/ReceiptDomain/*.swift. Any trap or broken invariant is a finding.
import CivilTime
import Foundation

private let decisionFuzzNow = Date(timeIntervalSince1970: 1_717_200_000)  // 2024-06-01T00:00:00Z

/// Reads choices from the fuzzer's bytes; past the end every choice is 0.
private struct Choices {
    let bytes: UnsafeBufferPointer<UInt8>
    var offset = 0

    mutating func byte() -> Int {
        guard offset < bytes.count else { return 0 }
        defer { offset += 1 }
        return Int(bytes[offset])
    }

    mutating func pick<T>(_ options: [T]) -> T { options[byte() % options.count] }

    mutating func raw64() -> Int64 {
        var value: UInt64 = 0
        for _ in 0..<8 { value = value << 8 | UInt64(byte()) }
        return Int64(bitPattern: value)
    }
}

private let extremeIntegers: [Int64] = [
    0, 1, -1, Int64.max, Int64.min, Int64.max - 807, 9_223_372_036_854_775_000, 9_000_000_000_000_000,
    1_214_870_399_999, 1_214_870_400_000, 4_102_444_799_999, 4_102_444_800_000, Int64(Int32.max),
    Int64(Int32.max) + 1, Int64(Int32.min), Int64(Int32.min) - 1, 1_717_200_000_000, 1_717_200_000_001,
    1_717_199_999_999, 253_402_300_799_999, 9_224_318_016_000_000,
]

private func number(_ c: inout Choices) -> JSONValue {
    let value: Int64 = c.byte() % 4 == 0 ? c.raw64() : c.pick(extremeIntegers)
    switch c.byte() % 8 {
    case 0: return .number(String(value))
    case 1: return .number("\(value).0")
    case 2: return .number("1e\(c.byte() % 40)")
    case 3: return .string(" \(value) ")
    case 4: return .string("+\(value)")
    case 5: return .string("-0")
    case 6: return .number("\(Double(value))")
    default: return .string(String(value))
    }
}

private func text(_ c: inout Choices) -> JSONValue {
    switch c.byte() % 9 {
    case 0: return .string("")
    case 1: return .string("\u{0}")
    case 2: return .string("com.example.reader.monthly\u{0}x")
    case 3: return .string(String(repeating: "A", count: 4096 + c.byte()))
    case 4: return .string("\"quoted\\ and caf\u{E9} \u{1F600}")
    case 5: return .null
    case 6: return number(&c)
    case 7: return .bool(c.byte() % 2 == 0)
    default: return .string("1000000811111111")
    }
}

private func field(_ c: inout Choices, usual: JSONValue) -> JSONValue? {
    switch c.byte() % 6 {
    case 0: return nil
    case 1: return number(&c)
    case 2: return text(&c)
    default: return usual
    }
}

private func transaction(_ c: inout Choices, index: Int) -> JSONValue {
    let otid = "1000000811111111"
    let purchase = 1_717_200_000_000 + Int64(index - 2) * 2_592_000_000
    var members: JSONObject = [:]
    let usual: [(String, JSONValue)] = [
        ("transaction_id", .string(index == 0 ? otid : "10000008111112\(index)")),
        ("original_transaction_id", .string(otid)),
        ("product_id", .string(index % 2 == 0 ? "com.example.reader.monthly" : "com.example.reader.yearly")),
        ("purchase_date_ms", .string(String(purchase))),
        ("original_purchase_date_ms", .string(String(purchase))),
        ("expires_date_ms", .string(String(purchase + 2_592_000_000))),
        ("cancellation_date_ms", .null), ("cancellation_reason", .null), ("is_upgraded", .string("false")),
        ("is_trial_period", .string("false")), ("quantity", .string("1")),
        ("web_order_line_item_id", .string("230000\(index)")), ("subscription_group_identifier", .string("20500001")),
        ("offer_code_ref_name", .null), ("in_app_ownership_type", .string("PURCHASED")),
    ]
    for (key, value) in usual {
        if let chosen = field(&c, usual: value) { members[key] = chosen }
    }
    if c.byte() % 4 == 0 { members["cancellation_date_ms"] = .string(String(purchase + 86_400_000)) }
    if c.byte() % 4 == 0 { members["is_upgraded"] = .string("true") }
    return .object(members)
}

private func response(_ c: inout Choices) -> JSONValue {
    var members: JSONObject = [:]
    members["status"] = c.pick([.number("0"), .number("21006"), .number("21010"), .number("21004"), number(&c)])
    members["environment"] = c.pick([.string("Production"), .string("Sandbox"), text(&c)])
    let transactions = (0..<(c.byte() % 5)).map { transaction(&c, index: $0) }
    members["latest_receipt_info"] = .array(transactions)
    var receipt: JSONObject = ["in_app": .array(Array(transactions.prefix(1)))]
    if let bundle = field(&c, usual: .string("com.example.reader")) { receipt["bundle_id"] = bundle }
    members["receipt"] = .object(receipt)
    var pending: JSONObject = ["original_transaction_id": .string("1000000811111111")]
    for key in ["auto_renew_status", "expiration_intent", "is_in_billing_retry_period", "grace_period_expires_date_ms"]
    {
        if let value = field(&c, usual: .string(key == "grace_period_expires_date_ms" ? "1717300000000" : "1")) {
            pending[key] = value
        }
    }
    pending["auto_renew_product_id"] = text(&c)
    members["pending_renewal_info"] = .array([.object(pending)])
    if let receiptText = field(&c, usual: .string("MIIT" + String(repeating: "A", count: 40))) {
        members["latest_receipt"] = receiptText
    }
    return .object(members)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func decisionFuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    var choices = Choices(bytes: UnsafeBufferPointer(start: data, count: size))
    var body = ""
    response(&choices).write(to: &body)
    let bytes = Array(body.utf8)

    _ = VerifyClassifier.classify(
        transportFailure: nil,
        httpStatus: 200,
        headers: [:],
        body: bytes,
        requestedEnvironment: .production,
        now: decisionFuzzNow
    )
    // Stored rows hold anything PostgreSQL can (timestamptz reaches the year 294276).
    let storedExpiries: [Date?] = [
        nil, decisionFuzzNow, Date(timeIntervalSince1970: 9_224_318_015_999),
        Date(timeIntervalSince1970: -210_866_803_200),
        Date(timeIntervalSince1970: Double(choices.raw64()) / 1000),
    ]
    for storedExpiry in storedExpiries {
        let stored = StoredSubscription(
            originalTransactionId: "1000000811111111",
            userId: "u",
            productId: "com.example.reader.monthly",
            expiresAt: storedExpiry,
            state: .active
        )
        let ended = DecisionEngine.accountNotFound(stored: stored, now: decisionFuzzNow, environment: nil)
        decisionCheck(ended.state == .expired && !ended.isEntitled, "21010 left an entitlement")
        if let expiry = storedExpiry { _ = RFC3339.string(expiry) }
    }
    guard let parsed = try? VerifyReceiptResponse.parse(bytes) else { return 0 }
    // What the parser accepts is within the bounds: every date, integer and text the engine may store.
    for transaction in parsed.subscriptionTransactions {
        for date in [transaction.purchaseDate, transaction.expiresDate, transaction.cancellationDate].compactMap({ $0 })
        {
            let ms = date.timeIntervalSince1970 * 1000
            decisionCheck(
                ms >= Double(ValueBounds.earliestMilliseconds) && ms < Double(ValueBounds.latestMilliseconds),
                "a date outside the bounds was accepted"
            )
        }
        decisionCheck(!transaction.productId.utf8.contains(0), "a NUL character was accepted")
        decisionCheck(transaction.productId.utf8.count <= ValueBounds.maxTextLength, "an over-long text was accepted")
    }
    for storedExpiry in storedExpiries {
        let stored = StoredSubscription(
            originalTransactionId: "1000000811111111",
            userId: "u",
            productId: "com.example.reader.monthly",
            expiresAt: storedExpiry,
            state: .active
        )
        let decision = DecisionEngine.decide(
            stored: stored,
            response: parsed,
            now: decisionFuzzNow,
            bundleId: "com.example.reader"
        )
        if let before = storedExpiry, let after = decision.expiresAt, after < before,
            !DecisionEngine.sameInstant(after, before)
        {
            decisionCheck(decision.expiryMovedBackwards, "an expiry moved backwards silently")
            decisionCheck(decision.expiryMovedBackwardsReason != nil, "a backwards move without a reason")
        }
        if decision.state == .active {
            decisionCheck((decision.expiresAt ?? .distantPast) > decisionFuzzNow, "active but expired")
        }
        if let expiry = decision.expiresAt { _ = RFC3339.string(expiry) }
    }
    return 0
}

private func decisionCheck(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError("invariant violated: \(message())") }
}
