import Foundation

/// The query of Get Transaction History v2 (docs/simulator.md, "The Server API"), parsed and checked, and
/// the `revision` page token that binds a page to it: a token carries the next offset and a MAC of the
/// query without `revision`, so it only works with the same query.
struct HistoryQuery: Sendable {
    var startDate: Int64?
    var endDate: Int64?
    var descending = false
    var productIDs: Set<String> = []
    var productTypes: Set<String> = []
    var groups: Set<String> = []
    var revoked: Bool?
    var ownership: String?
    var revision: String?
    /// The parameters other than `revision`, sorted: what a page token is bound to.
    var canonical: String

    /// Apple's page size for history, refund history and notification history.
    static let pageSize = 20

    /// Parses a raw query string; nil when a parameter is unknown or has a value Apple refuses (the caller
    /// answers 400).
    init?(_ query: Substring) {
        var kept: [String] = []
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = String(parts[0])
            let value = parts.count > 1 ? String(parts[1]).removingPercentEncoding ?? String(parts[1]) : ""
            switch key {
            case "startDate":
                guard let v = Int64(value), v >= 0 else { return nil }
                startDate = v
            case "endDate":
                guard let v = Int64(value), v >= 0 else { return nil }
                endDate = v
            case "sort":
                guard value == "ASCENDING" || value == "DESCENDING" else { return nil }
                descending = value == "DESCENDING"
            case "productId": productIDs.insert(value)
            case "productType":
                guard ["AUTO_RENEWABLE", "NON_RENEWABLE", "CONSUMABLE", "NON_CONSUMABLE"].contains(value) else {
                    return nil
                }
                productTypes.insert(value)
            case "subscriptionGroupIdentifier": groups.insert(value)
            case "revoked":
                guard value == "true" || value == "false" else { return nil }
                revoked = value == "true"
            case "inAppOwnershipType":
                guard value == "FAMILY_SHARED" || value == "PURCHASED" else { return nil }
                ownership = value
            case "revision":
                revision = value
                continue
            default: return nil
            }
            kept.append(String(pair))
        }
        if let s = startDate, let e = endDate, s > e { return nil }
        canonical = kept.sorted().joined(separator: "&")
    }

    func matches(_ t: SimTransaction) -> Bool {
        if let s = startDate, t.purchase < s { return false }
        if let e = endDate, t.purchase >= e { return false }
        if !productIDs.isEmpty && !productIDs.contains(t.product.productId) { return false }
        if !productTypes.isEmpty && !productTypes.contains("AUTO_RENEWABLE") { return false }
        if !groups.isEmpty && !groups.contains(t.product.groupId) { return false }
        if let r = revoked, r != t.isRefunded { return false }
        if let o = ownership, o != (t.familyShared ? "FAMILY_SHARED" : "PURCHASED") { return false }
        return true
    }

    /// A page token: `offset` and a MAC of (`key`, `scope`, canonical query), base64url.
    static func token(offset: Int, key: UInt64, scope: UInt64, canonical: String) -> String {
        Base64URL.encodeString(Array("\(offset).\(String(mac(key: key, scope: scope, canonical), radix: 16))".utf8))
    }

    /// The offset a token stands for, if it was made for this query (nil: refuse with 4000005).
    static func offset(of token: String, key: UInt64, scope: UInt64, canonical: String) -> Int? {
        guard let bytes = Base64URL.decode(Array(token.utf8)) else { return nil }
        let parts = String(decoding: bytes, as: UTF8.self).split(separator: ".")
        guard parts.count == 2, let offset = Int(parts[0]), offset >= 0,
            parts[1] == String(mac(key: key, scope: scope, canonical), radix: 16)[...]
        else { return nil }
        return offset
    }

    private static func mac(key: UInt64, scope: UInt64, _ canonical: String) -> UInt64 {
        var h = SeededRandom.hash(key, scope, 0x4157)
        for byte in canonical.utf8 { h = SeededRandom.mix(h ^ UInt64(byte)) }
        return h
    }
}
