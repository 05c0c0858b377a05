// libFuzzer entry point for the verifyReceipt response path: parse, classify, decide.
// Not a SwiftPM target: scripts/fuzz compiles this file together with Sources/ReceiptDomain/*.swift
// (`swiftc -sanitize=fuzzer -parse-as-library`). Any trap (crash, overflow, out-of-bounds) is a finding.
import Foundation

/// Fixed inputs so a finding replays exactly.
private let fuzzNow = Date(timeIntervalSince1970: 1_717_200_000)  // 2024-06-01T00:00:00Z

@_cdecl("LLVMFuzzerTestOneInput")
public func receiptFuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    let bytes = UnsafeBufferPointer(start: data, count: size)

    // 1. The full classifier over an HTTP 200 body (it parses internally), and over the status
    //    codes that take the other branches, with the first line of the input as Retry-After.
    let firstLine = String(decoding: bytes.prefix { $0 != 0x0A }.prefix(64), as: UTF8.self)
    for httpStatus in [200, 429, 503] {
        _ = VerifyClassifier.classify(
            transportFailure: nil,
            httpStatus: httpStatus,
            headers: ["retry-after": firstLine],
            body: bytes,
            requestedEnvironment: size % 2 == 0 ? .production : .sandbox,
            now: fuzzNow
        )
    }
    _ = RetryAfter.earliest(firstLine, now: fuzzNow)

    // 2. Whatever parses: classify by status, then decide for every subscription it mentions and for
    //    one it does not, with and without a configured bundle id, against stored rows whose expiry is
    //    unknown, in the past and far in the future. The documented rules are checked as invariants: a
    //    violation traps like a crash, so libFuzzer records the input.
    guard let response = try? VerifyReceiptResponse.parse(bytes) else { return 0 }
    check((try? VerifyReceiptResponse.parse(bytes)) == response, "parse is not deterministic")
    _ = VerifyClassifier.classify(response: response, requestedEnvironment: nil)
    let mentioned = Set(response.subscriptionTransactions.map(\.originalTransactionId))
    var otids = Set(response.subscriptionTransactions.prefix(8).map(\.originalTransactionId))
    let absent = "fuzz-absent-otid"
    if !mentioned.contains(absent) { otids.insert(absent) }
    let storedExpiries: [Date?] = [nil, fuzzNow.addingTimeInterval(-86_400), fuzzNow.addingTimeInterval(86_400 * 3650)]
    for otid in otids {
        for bundle in [nil, response.receipt?.bundleId, "com.example.reader"] {
            for storedExpiry in storedExpiries {
                let stored = StoredSubscription(
                    originalTransactionId: otid,
                    userId: "u",
                    productId: "p",
                    bundleId: nil,
                    environment: nil,
                    expiresAt: storedExpiry,
                    state: storedExpiry == nil ? nil : .active
                )
                let decision = DecisionEngine.decide(stored: stored, response: response, now: fuzzNow, bundleId: bundle)
                check(
                    DecisionEngine.decide(stored: stored, response: response, now: fuzzNow, bundleId: bundle)
                        == decision,
                    "decide is not deterministic"
                )
                checkInvariants(
                    decision,
                    stored: stored,
                    response: response,
                    bundle: bundle,
                    absent: !mentioned.contains(otid)
                )
            }
        }
    }
    return 0
}

/// The rules of docs/decision-rules.md that must hold for any response.
private func checkInvariants(
    _ decision: Decision,
    stored: StoredSubscription,
    response: VerifyReceiptResponse,
    bundle: String?,
    absent: Bool
) {
    if decision.outcome == .rejected {
        check(decision.rejectReason != nil, "a rejection without a reason")
        return
    }
    if response.status == 21010 {
        check(decision.state == .expired && !decision.isEntitled, "21010 did not end the entitlement")
        return
    }
    check(response.status == 0 || response.status == 21006, "status \(response.status) was not rejected")
    if let bundle { check(response.receipt?.bundleId == bundle, "a foreign receipt was not rejected") }
    check(!absent, "a subscription absent from the receipt was not rejected")
    check(decision.originalTransactionId == stored.originalTransactionId, "decided another subscription")
    if let before = stored.expiresAt, let after = decision.expiresAt, after < before,
        !DecisionEngine.sameInstant(after, before)
    {
        check(decision.expiryMovedBackwards, "the expiry moved backwards silently")
        check(decision.expiryMovedBackwardsReason != nil, "the expiry moved backwards without a reason")
    }
    if decision.state == .active { check((decision.expiresAt ?? .distantPast) > fuzzNow, "active but expired") }
}

/// Traps (a libFuzzer finding) when `condition` is false.
private func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError("invariant violated: \(message())") }
}
