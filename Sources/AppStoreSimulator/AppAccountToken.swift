/// The `appAccountToken` an app sets at purchase (a UUID naming its own account of the customer): most families
/// carry one on every transaction and in the renewal info; one in six never had one set (the app did not pass it),
/// nor does another app's receipt.
enum AppAccountToken {
    /// The family's token, or nil when its purchases carried none.
    static func of(seed: UInt64, family: ReceiptFamily) -> String? {
        guard family.bundleId == family.appBundleId else { return nil }
        let h = SeededRandom.hash(seed, 0xAAC7, UInt64(family.index))
        guard h % 6 != 0 else { return nil }
        return uuid(SeededRandom.hash(seed, 0xAAC8, UInt64(family.index)), h)
    }

    /// A version 4 UUID, lowercase, from two words.
    static func uuid(_ a: UInt64, _ b: UInt64) -> String {
        let hi = a & 0xFFFF_FFFF_FFFF_0FFF | 0x0000_0000_0000_4000
        let lo = b & 0x3FFF_FFFF_FFFF_FFFF | 0x8000_0000_0000_0000
        let hex = Array(hexWord(hi) + hexWord(lo))
        return [hex[0..<8], hex[8..<12], hex[12..<16], hex[16..<20], hex[20..<32]].map { String($0) }
            .joined(separator: "-")
    }

    private static func hexWord(_ v: UInt64) -> String {
        let digits = String(v, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
