// Benchmark harness for AppStoreSignedData: verifying many payloads signed by one chain (the chain cache
// at work), and the cost of one verification without the cache. Not a test: run it with
// Benchmarks/signed-data.sh (release build), figures in BENCHMARKS.md.
import AppStoreSignedData
import Dispatch
import Foundation
import SignedDataTestSupport
import Synchronization

struct Arguments {
    var count = 100_000
    var threads = 1
    var uncached = 300

    init(_ arguments: [String]) {
        var rest = arguments.dropFirst()
        while let flag = rest.popFirst() {
            guard let value = rest.popFirst().flatMap(Int.init), value > 0 else {
                FileHandle.standardError.write(
                    Data("usage: signed-data-benchmark [--count N] [--threads T] [--uncached N]\n".utf8)
                )
                exit(64)
            }
            switch flag {
            case "--count": count = value
            case "--threads": threads = value
            case "--uncached": uncached = value
            default:
                FileHandle.standardError.write(Data("unknown option \(flag)\n".utf8))
                exit(64)
            }
        }
    }
}

func seconds(since start: DispatchTime) -> Double {
    Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
}

let arguments = Arguments(CommandLine.arguments)
let pki = try TestPKI()
let roots = TrustedRoots([pki.root])
let options = SignedDataVerifier.Options(bundleId: TestPayloads.bundleId, environment: .production)

// 1. Sign the payloads (not measured): distinct transactions, one chain.
let signStart = DispatchTime.now()
let payloads = (0..<arguments.count).map { index in
    pki.jws(payload: TestPayloads.transaction(transactionId: String(3_000_000_000_000_000 + index)))
}
print("signed=\(arguments.count) sign_seconds=\(String(format: "%.2f", seconds(since: signStart)))")

// 2. Verify them all with one verifier (one chain cache), on `threads` threads.
let cache = ChainCache()
let verifier = SignedDataVerifier(roots: roots, options: options, cache: cache)
let failures = Mutex(0)
let start = DispatchTime.now()
DispatchQueue.concurrentPerform(iterations: arguments.threads) { thread in
    var index = thread
    var failed = 0
    while index < payloads.count {
        do {
            _ = try verifier.verifyTransaction(payloads[index])
        } catch {
            failed += 1
        }
        index += arguments.threads
    }
    failures.withLock { $0 += failed }
}
let elapsed = seconds(since: start)
let stats = cache.statistics
print(
    "verified=\(arguments.count) threads=\(arguments.threads) seconds=\(String(format: "%.2f", elapsed)) "
        + "per_payload_us=\(String(format: "%.1f", elapsed / Double(arguments.count) * 1e6)) "
        + "payloads_per_second=\(Int(Double(arguments.count) / elapsed)) failures=\(failures.withLock { $0 }) "
        + "cache_hits=\(stats.hits) cache_misses=\(stats.misses)"
)

// 3. The same work without the cache: a fresh cache for every payload (the whole chain each time).
let uncachedCount = min(arguments.uncached, payloads.count)
let uncachedStart = DispatchTime.now()
for payload in payloads.prefix(uncachedCount) {
    let fresh = SignedDataVerifier(roots: roots, options: options, cache: ChainCache())
    _ = try fresh.verifyTransaction(payload)
}
let uncachedElapsed = seconds(since: uncachedStart)
print(
    "uncached=\(uncachedCount) seconds=\(String(format: "%.2f", uncachedElapsed)) "
        + "per_payload_us=\(String(format: "%.1f", uncachedElapsed / Double(max(1, uncachedCount)) * 1e6))"
)
let ok = failures.withLock { $0 } == 0
print("RESULT \(ok ? "ok" : "FAILED") \(arguments.count) payloads in \(String(format: "%.2f", elapsed)) s")
exit(ok ? 0 : 1)
