/// Encodes and decodes the simulator's private receipt format.
///
/// Layout before base64: magic `SIMR`, version, environment, 2 reserved bytes, family index (u32),
/// original_transaction_id (u64), creation ms (i64), issue sequence (u32), padding length (u32),
/// padding (pseudo-random, grows with history), SipHash-2-4 MAC (8 bytes) keyed by the seed.
/// Not base64 or too short or wrong magic: malformed (21002); MAC mismatch: unauthenticated (21003).
/// `decode` also reads PKCS#7 app receipts (`AppReceiptReader`, first byte 0x30), what `purchases.jsonl` and
/// Apple's `latest_receipt` carry (docs/simulator.md, "Stored receipts"); this private format is still answered.
public struct ReceiptCodec: Sendable {
    public enum Decoded: Sendable, Equatable {
        case valid(ReceiptToken)
        case malformed
        case unauthenticated
    }

    let seed: UInt64
    let sip: SipHash
    let appReceipts: AppReceiptReader
    static let headerLength = 36
    static let magic: [UInt8] = [0x53, 0x49, 0x4D, 0x52]

    public init(seed: UInt64) {
        self.seed = seed
        self.sip = SipHash(k0: SeededRandom.hash(seed, 0x5EA1), k1: SeededRandom.hash(seed, 0x5EA2))
        self.appReceipts = AppReceiptReader(seed: seed)
    }

    private static func put<T: FixedWidthInteger>(_ v: T, _ out: inout [UInt8]) {
        withUnsafeBytes(of: v.littleEndian) { out.append(contentsOf: $0) }
    }

    /// The receipt as base64 ASCII bytes.
    public func encode(_ token: ReceiptToken, paddingLength: Int) -> [UInt8] {
        var blob: [UInt8] = []
        blob.reserveCapacity(Self.headerLength + paddingLength + 8)
        blob += Self.magic
        blob += [1, token.sandbox ? 1 : 0, 0, 0]
        Self.put(token.familyIndex, &blob)
        Self.put(token.originalTransactionId, &blob)
        Self.put(token.createdAt, &blob)
        Self.put(token.issueSequence, &blob)
        Self.put(UInt32(paddingLength), &blob)
        var rng = SeededRandom(
            seed,
            0xBAD,
            UInt64(token.familyIndex),
            UInt64(bitPattern: token.createdAt),
            UInt64(token.issueSequence)
        )
        var remaining = paddingLength
        while remaining > 0 {
            var word = rng.next()
            for _ in 0..<min(8, remaining) {
                blob.append(UInt8(truncatingIfNeeded: word))
                word >>= 8
            }
            remaining -= min(8, remaining)
        }
        Self.put(sip.mac(blob), &blob)
        return Base64.encode(blob)
    }

    public func encodeString(_ token: ReceiptToken, paddingLength: Int) -> String {
        String(decoding: encode(token, paddingLength: paddingLength), as: UTF8.self)
    }

    /// Decodes base64 receipt-data (as sent, JSON escapes already removed).
    public func decode(_ base64: [UInt8]) -> Decoded {
        guard let blob = Base64.decode(base64) else { return .malformed }
        if blob.first == 0x30 { return appReceipts.decode(blob) }
        guard blob.count >= Self.headerLength + 8, Array(blob[0..<4]) == Self.magic, blob[4] == 1 else {
            return .malformed
        }
        return blob.withUnsafeBytes { raw -> Decoded in
            func load<T: FixedWidthInteger>(_ offset: Int, _: T.Type) -> T {
                T(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: T.self))
            }
            let padding = Int(load(32, UInt32.self))
            guard Self.headerLength + padding + 8 == blob.count else { return .unauthenticated }
            let body = UnsafeRawBufferPointer(rebasing: raw[0..<(blob.count - 8)])
            guard sip.mac(body) == load(blob.count - 8, UInt64.self) else { return .unauthenticated }
            return .valid(
                ReceiptToken(
                    familyIndex: load(8, UInt32.self),
                    originalTransactionId: load(12, UInt64.self),
                    sandbox: blob[5] == 1,
                    createdAt: load(20, Int64.self),
                    issueSequence: load(28, UInt32.self)
                )
            )
        }
    }
}
