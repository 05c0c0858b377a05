import Foundation
import NIOHTTP1
import Testing

@testable import AppStoreSimulator

@Suite struct FaultTests {
    @Test(arguments: [0.01, 0.05, 0.09])
    func eachKindHappensAtItsRateOver10000Requests(rate: Double) {
        let plan = FaultPlan(seed: 77, rates: Dictionary(uniqueKeysWithValues: FaultKind.allCases.map { ($0, rate) }))
        var counts: [FaultKind: Int] = [:]
        for n in 0..<10_000 as Range<UInt64> {
            if let k = plan.decide(sequence: n) { counts[k, default: 0] += 1 }
        }
        for kind in FaultKind.allCases {
            let got = Double(counts[kind] ?? 0)
            #expect(abs(got - rate * 10_000) <= 0.2 * rate * 10_000, "\(kind): \(got) for rate \(rate)")
        }
    }

    @Test func decisionsAreDeterministicUnderTheSeedAndZeroMeansNever() {
        let a = FaultPlan(seed: 5, rates: [.reset: 0.3, .http500: 0.2])
        let b = FaultPlan(seed: 5, rates: [.reset: 0.3, .http500: 0.2])
        let c = FaultPlan(seed: 6, rates: [.reset: 0.3, .http500: 0.2])
        let seqA = (0..<500 as Range<UInt64>).map { a.decide(sequence: $0) }
        #expect(seqA == (0..<500 as Range<UInt64>).map { b.decide(sequence: $0) })
        #expect(seqA != (0..<500 as Range<UInt64>).map { c.decide(sequence: $0) })
        let none = FaultPlan(seed: 5, rates: [.reset: 0])
        #expect((0..<1000 as Range<UInt64>).allSatisfy { none.decide(sequence: $0) == nil })
        let all = FaultPlan(seed: 5, rates: [.hang: 1])
        #expect((0..<1000 as Range<UInt64>).allSatisfy { all.decide(sequence: $0) == .hang })
    }

    @Test func latencyDistributionsParseAndStayInRange() throws {
        #expect(LatencyDistribution(parsing: "50") == .fixed(50))
        #expect(LatencyDistribution(parsing: "uniform:10-100") == .uniform(10, 100))
        #expect(LatencyDistribution(parsing: "normal:50,10") == .normal(mean: 50, stddev: 10))
        #expect(LatencyDistribution(parsing: "uniform:100-10") == nil)
        #expect(LatencyDistribution(parsing: "soon") == nil)
        let uniform = FaultPlan(seed: 1, latency: .uniform(10, 100))
        let samples = (0..<2000 as Range<UInt64>).map { uniform.delay(sequence: $0) }
        #expect(samples.allSatisfy { (10...100).contains($0) })
        #expect(Set(samples).count > 50)
        let normal = FaultPlan(seed: 1, latency: .normal(mean: 50, stddev: 10))
        let ns = (0..<4000 as Range<UInt64>).map { Double(normal.delay(sequence: $0)) }
        let mean = ns.reduce(0, +) / Double(ns.count)
        #expect(abs(mean - 50) < 2)
    }

    @Test func the211xxMixSpellsRetryableEveryWay() {
        let variants = (0..<6 as Range<UInt64>).map { FaultPlan.status211xx(sequence: $0) }
        #expect(variants.allSatisfy { (21100...21199).contains($0.status) })
        let keys = Set(variants.compactMap { $0.retryable?.key })
        #expect(keys == ["is_retryable", "is-retryable"])
        #expect(variants.contains { $0.retryable == nil })
        #expect(variants.contains { $0.retryable?.json == "false" })
    }

    /// Runs one request against a server whose every request gets `kind`.
    private func oneFaulted(
        _ kind: FaultKind,
        path: String = "/verifyReceipt",
        configure: @escaping (inout SimulatorConfiguration) -> Void = { _ in }
    )
        async throws -> Result<TestResponse, any Error>
    {
        try await withSimulator(configure: { c in
            c.faults = FaultPlan(seed: c.seed, rates: [kind: 1.0], hangMilliseconds: 300)
            configure(&c)
        }) { server in
            let (_, receipt) = try #require(server.storedReceipt(.silentRenewal))
            let result: Result<TestResponse, any Error>
            do {
                result = .success(
                    try await TestConnection.once(port: server.port, .POST, path, body: verifyBody(receipt: receipt))
                )
            } catch {
                result = .failure(error)
            }
            // Faults never apply to /_stats.
            let stats = try await TestConnection.once(port: server.port, .GET, "/_stats")
            #expect(stats.status == 200)
            let faults = try #require(stats.json?["faults"] as? [String: Any])
            #expect(faults[kind.rawValue] as? Int == 1)
            return result
        }
    }

    @Test func httpErrorFaults() async throws {
        #expect(try await oneFaulted(.http500).get().status == 500)
        #expect(try await oneFaulted(.http503, path: "/sandbox/verifyReceipt").get().status == 503)
        let r429 = try await oneFaulted(.http429, configure: { $0.faults.retryAfterSeconds = 7 }).get()
        #expect(r429.status == 429)
        #expect(r429.header("Retry-After") == "7")
    }

    @Test func appleStatusFaults() async throws {
        #expect(try await oneFaulted(.status21005).get().json?["status"] as? Int == 21005)
        #expect(try await oneFaulted(.status21002).get().json?["status"] as? Int == 21002)
        let r = try await oneFaulted(.status211xx).get()
        let json = try #require(r.json)
        #expect((21100...21199).contains(json["status"] as? Int ?? 0))
        let malformed = try await oneFaulted(.malformedJSON).get()
        #expect(malformed.status == 200)
        #expect(malformed.json == nil && !malformed.body.isEmpty)
    }

    @Test func connectionFaults() async throws {
        for kind in [FaultKind.reset, .hang, .truncated] {
            let start = ContinuousClock.now
            let result = try await oneFaulted(kind)
            if case .success(let r) = result {
                Issue.record("\(kind) produced a complete response: \(r.status), \(r.body.count) bytes")
            }
            if kind == .hang { #expect(ContinuousClock.now - start >= .milliseconds(250)) }
        }
    }

    @Test func latencyIsAddedOverTheWire() async throws {
        try await withSimulator(configure: { $0.faults = FaultPlan(seed: 1, latency: .fixed(150)) }) { server in
            let (_, receipt) = try #require(server.storedReceipt(.silentRenewal))
            let start = ContinuousClock.now
            let r = try await TestConnection.once(
                port: server.port,
                .POST,
                "/verifyReceipt",
                body: verifyBody(receipt: receipt)
            )
            #expect(r.json?["status"] as? Int == 0)
            #expect(ContinuousClock.now - start >= .milliseconds(150))
        }
    }

    @Test func faultRatesHoldOverTheWire() async throws {
        try await withSimulator(configure: { c in
            c.faults = FaultPlan(seed: 3, rates: [.http500: 0.2, .status21005: 0.2])
        }) { server in
            let (_, receipt) = try #require(server.storedReceipt(.silentRenewal))
            let conn = try await TestConnection.connect(port: server.port)
            var counts = [0, 0, 0]
            for _ in 0..<1000 {
                let r = try await conn.send(.POST, "/verifyReceipt", body: verifyBody(receipt: receipt))
                if r.status == 500 {
                    counts[0] += 1
                } else if r.json?["status"] as? Int == 21005 {
                    counts[1] += 1
                } else {
                    counts[2] += 1
                }
            }
            await conn.close()
            // Deterministic: sequence numbers 0..<1000 decide exactly as the plan says.
            let plan = FaultPlan(seed: 3, rates: [.http500: 0.2, .status21005: 0.2])
            let expected500 = (0..<1000 as Range<UInt64>).filter { plan.decide(sequence: $0) == .http500 }.count
            #expect(counts[0] == expected500)
            #expect(abs(counts[0] - 200) <= 40 && abs(counts[1] - 200) <= 40)
        }
    }
}
