import NIOCore
import Synchronization

/// verifyReceipt without the HTTP: request body in, Apple status and JSON body out.
///
/// Checks in Apple's order as far as it is known: body shape (21000), receipt base64 (21002),
/// authenticity (21003), environment (21007 sandbox receipt on production, 21008 the reverse),
/// per-account fixed answers (21003, 21004, 21010), shared secret (21004), then status 0. With
/// `secretMismatchForAll` every well-formed request is answered 21004, as when the app's shared secret is
/// wrong for every receipt (a wrong password alone does that only for receipts that get that far). Successful
/// answers are cached per (receipt, exclude flag, now) since they are a pure function of those. PKCS#7 app
/// receipts (what the app stored) are read once: their tokens are cached by a 128-bit keyed hash of the
/// base64 text, so a repeated receipt costs a hash, not a BER walk and a signature check.
public final class VerifyService: Sendable {
    public struct Outcome: Sendable {
        public var appleStatus: Int
        public var body: ByteBuffer
    }

    struct CacheKey: Hashable {
        var token: ReceiptToken
        var excludeOld: Bool
        var now: Int64
    }

    public let population: Population
    public let renderer: ResponseRenderer
    public let clock: SimClock
    private let sharedSecret: [UInt8]
    public let secretMismatchForAll: Bool
    // Responses are immutable once rendered; the lock only guards the dictionary.
    private let cache = Mutex<[CacheKey: ByteBuffer]>([:])
    /// Answers kept: enough for a client's retries and for repeating one receipt (Benchmarks/simulator/run.sh).
    /// A nightly run sends each receipt once, and keeping 20,000 answers of ~20 KB each grew the process by
    /// ~500 MB, each new page a fault to clear (a tenth of the CPU of a verifyReceipt); the freed answers of
    /// a small cache are reused by the allocator instead.
    private static let responseCacheLimit = 1_024
    /// Decoded receipt tokens are a few bytes each.
    private static let cacheLimit = 20_000
    struct ReceiptKey: Hashable {
        var h0: UInt64
        var h1: UInt64
        var count: Int
    }
    private let receiptHash: SipHash
    private let receiptCache = Mutex<[ReceiptKey: ReceiptCodec.Decoded]>([:])

    public init(population: Population, sharedSecret: String, clock: SimClock, secretMismatchForAll: Bool = false) {
        self.population = population
        self.renderer = ResponseRenderer(population: population)
        self.sharedSecret = Array(sharedSecret.utf8)
        self.clock = clock
        self.secretMismatchForAll = secretMismatchForAll
        let seed = population.seed
        self.receiptHash = SipHash(k0: SeededRandom.hash(seed, 0xCAC1), k1: SeededRandom.hash(seed, 0xCAC2))
    }

    /// Decodes receipt-data; app receipts (base64 of PKCS#7 starts with `M`) through the cache.
    func decodeReceipt(_ data: [UInt8]) -> ReceiptCodec.Decoded {
        guard data.first == UInt8(ascii: "M") else { return renderer.codec.decode(data) }
        let key = data.withUnsafeBytes {
            let (h0, h1) = receiptHash.mac128($0)
            return ReceiptKey(h0: h0, h1: h1, count: data.count)
        }
        if let hit = receiptCache.withLock({ $0[key] }) { return hit }
        let decoded = renderer.codec.decode(data)
        receiptCache.withLock { c in
            if c.count >= Self.cacheLimit { c.removeAll(keepingCapacity: true) }
            c[key] = decoded
        }
        return decoded
    }

    private static func buffer(_ bytes: [UInt8]) -> ByteBuffer {
        var b = ByteBufferAllocator().buffer(capacity: bytes.count)
        b.writeBytes(bytes)
        return b
    }

    private static let statusBodies: [Int: ByteBuffer] = {
        var d: [Int: ByteBuffer] = [:]
        for s in [21000, 21002, 21003, 21004, 21005, 21007, 21008, 21010] {
            d[s] = buffer(ResponseRenderer.statusBody(s))
        }
        return d
    }()

    static func statusOutcome(_ status: Int) -> Outcome {
        Outcome(appleStatus: status, body: statusBodies[status] ?? buffer(ResponseRenderer.statusBody(status)))
    }

    public func verify(body: [UInt8], sandboxPath: Bool) -> Outcome {
        body.withUnsafeBytes { verify(body: $0, sandboxPath: sandboxPath) }
    }

    public func verify(body: UnsafeRawBufferPointer, sandboxPath: Bool) -> Outcome {
        guard let request = VerifyRequest.parse(body) else { return Self.statusOutcome(21000) }
        if secretMismatchForAll { return Self.statusOutcome(21004) }
        guard let data = request.receiptData, !data.isEmpty else { return Self.statusOutcome(21002) }
        let token: ReceiptToken
        switch decodeReceipt(data) {
        case .malformed: return Self.statusOutcome(21002)
        case .unauthenticated: return Self.statusOutcome(21003)
        case .valid(let t): token = t
        }
        let index = Int(token.familyIndex)
        guard index < population.families.count else { return Self.statusOutcome(21003) }
        let family = population.families[index]
        guard family.primaryOriginalTransactionId == token.originalTransactionId, family.sandbox == token.sandbox else {
            return Self.statusOutcome(21003)
        }
        if family.sandbox && !sandboxPath { return Self.statusOutcome(21007) }
        if !family.sandbox && sandboxPath { return Self.statusOutcome(21008) }
        if let fixed = family.fixedStatus { return Self.statusOutcome(fixed) }
        guard let password = request.password, password == sharedSecret else { return Self.statusOutcome(21004) }
        let now = clock.now()
        let key = CacheKey(token: token, excludeOld: request.excludeOldTransactions, now: now)
        if let hit = cache.withLock({ $0[key] }) { return Outcome(appleStatus: 0, body: hit) }
        let rendered = Self.buffer(
            renderer.renderSuccess(
                family: family,
                token: token,
                now: now,
                excludeOld: request.excludeOldTransactions
            )
        )
        cache.withLock { c in
            if c.count >= Self.responseCacheLimit { c.removeAll(keepingCapacity: true) }
            c[key] = rendered
        }
        return Outcome(appleStatus: 0, body: rendered)
    }
}
