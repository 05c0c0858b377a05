import Crypto
import Foundation
import ReceiptDomain

/// A digest of everything a decision's ledger writes to `subscription_transactions` for one subscription
/// (docs/architecture.md, "Database work per subscription"). Stored on the subscription row
/// (`subscription_checks.ledger_digest`) in the same transaction as the ledger rows, so a later run whose
/// decision yields the same digest sends none of that subscription's ledger rows: most nights nothing in a
/// receipt's history changed, and every row sent costs an index probe and a row lock even when the
/// upsert changes nothing.
enum LedgerDigest {
    /// Bumped whenever the encoding below changes, so digests of an older build never match.
    static let version = "v2"

    /// SHA-256 over the entries in transaction id order (the order Apple lists them in does not matter), with
    /// the environment the ledger is written with; hex, prefixed by `version`. Each field has a fixed type at
    /// its position: text length-prefixed (4 bytes), numbers and dates as a marker byte and 8 bytes, a
    /// missing value as 0xFF, so no two ledgers encode alike.
    static func of(_ entries: [LedgerEntry], environment: String?) -> String {
        var hasher = SHA256()
        func add(_ text: String?) {
            guard var utf8 = text else {
                hasher.update(data: [0xFF])
                return
            }
            utf8.withUTF8 { bytes in
                withUnsafeBytes(of: UInt32(bytes.count).bigEndian) { hasher.update(bufferPointer: $0) }
                hasher.update(bufferPointer: UnsafeRawBufferPointer(bytes))
            }
        }
        func add(_ number: UInt64?) {
            guard let number else {
                hasher.update(data: [0xFF])
                return
            }
            hasher.update(data: [0x08])
            withUnsafeBytes(of: number.bigEndian) { hasher.update(bufferPointer: $0) }
        }
        func add(_ date: Date?) { add(date.map { $0.timeIntervalSince1970.bitPattern }) }
        func add(_ number: Int64?) { add(number.map { UInt64(bitPattern: $0) }) }
        func add(_ flag: Bool) { add(flag ? "1" : "0") }
        add(environment)
        for entry in entries.sorted(by: { $0.transactionId < $1.transactionId }) {
            add(entry.transactionId)
            add(entry.originalTransactionId)
            add(entry.productId)
            add(entry.subscriptionGroupIdentifier)
            add(entry.webOrderLineItemId)
            add(entry.kind.rawValue)
            add(entry.purchaseDate)
            add(entry.expiresDate)
            add(entry.isTrial)
            add(entry.isIntroOffer)
            add(entry.offer)
            add(entry.ownershipType)
            add(entry.replacedByUpgrade)
            add(entry.cancellationDate)
            add(entry.cancellationReason.map(Int64.init))
            let facts = entry.signedFacts
            add(facts == nil ? "unsigned" : "signed")
            add(facts?.priceMilliunits)
            add(facts?.currency)
            add(facts?.storefront)
            add(facts?.offerType.map(Int64.init))
            add(facts?.offerDiscountType)
            add(facts?.revocationType)
            add(facts?.revocationPercentage)
            add(facts?.transactionReason)
            add(facts?.signedTransaction)
            add(facts?.offerIdentifier)
            add(facts?.offerPeriod)
            add(facts?.appAccountToken)
            add(facts?.appTransactionId)
            add(facts?.billingPlanType)
        }
        let hex = Array("0123456789abcdef".utf8)
        var out = Array((version + ":").utf8)
        for byte in hasher.finalize() {
            out.append(hex[Int(byte >> 4)])
            out.append(hex[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
