import Foundation
import Testing

@testable import AppStoreSimulator

@Suite struct RateLimitTests {
    @Test func slidingWindowNeverAdmitsMoreThanTheLimitInAnySecond() {
        let stats = SimulatorStats(maxRequestsPerSecond: 10)
        var admittedTimes: [UInt64] = []
        var rng = SeededRandom(seed: 4)
        var t: UInt64 = 1_000_000_000
        for _ in 0..<5000 {
            t += rng.next() % 20_000_000  // bursts: 0..20 ms apart
            if stats.admit(now: t).admitted { admittedTimes.append(t) }
        }
        // Any window (x - 1 s, x] with x an admission time holds at most 10.
        var head = 0
        for (i, x) in admittedTimes.enumerated() {
            while admittedTimes[head] + 1_000_000_000 <= x { head += 1 }
            #expect(i - head + 1 <= 10)
        }
        #expect(admittedTimes.count >= 10 * Int((t - 1_000_000_000) / 1_000_000_000))
        let json = String(decoding: stats.json(), as: UTF8.self)
        #expect(json.contains("\"peak_admitted_per_second\":10"))
    }

    @Test func burstOverTheWireGets429WithRetryAfter() async throws {
        // A limit below what six connections send even on a starved machine: their first requests leave together,
        // so more than three arrive within a second however slowly each is answered (a debug build beside the whole
        // suite with a CPU-bound process managed 6 requests a second).
        let limit = 3
        let requests = 60
        try await withSimulator(configure: { c in
            c.maxRequestsPerSecond = limit
            c.faults.retryAfterSeconds = 2
        }) { server in
            let (_, receipt) = try #require(server.storedReceipt(.activeNotRenewed))
            let port = server.port
            let start = ContinuousClock.now
            let results = try await withThrowingTaskGroup(of: [TestResponse].self) { group in
                for _ in 0..<6 {
                    group.addTask {
                        let conn = try await TestConnection.connect(port: port)
                        var out: [TestResponse] = []
                        for _ in 0..<(requests / 6) {
                            out.append(try await conn.send(.POST, "/verifyReceipt", body: verifyBody(receipt: receipt)))
                        }
                        await conn.close()
                        return out
                    }
                }
                var all: [TestResponse] = []
                for try await r in group { all += r }
                return all
            }
            let elapsed = ContinuousClock.now - start
            let ok = results.filter { $0.status == 200 }.count
            let limited = results.filter { $0.status == 429 }
            #expect(results.count == requests)
            let seconds = Int(elapsed.components.seconds) + 1
            #expect(ok <= limit * seconds, "\(ok) OK in \(elapsed)")
            #expect(!limited.isEmpty)
            #expect(limited.allSatisfy { $0.header("Retry-After") == "2" })
            let stats = try await TestConnection.once(port: port, .GET, "/_stats")
            let json = try #require(stats.json)
            #expect((json["peak_admitted_per_second"] as? Int ?? 0) <= limit)
            #expect((json["peak_requests_per_second"] as? Int ?? 0) > limit)
            #expect(json["rate_limited"] as? Int == limited.count)
        }
    }
}
