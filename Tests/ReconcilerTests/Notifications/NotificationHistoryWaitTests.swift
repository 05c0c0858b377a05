import AppStoreClient
import AppStoreSignedData
import Crypto
import CurlHTTP
import Dispatch
import Foundation
import Logging
import Postgres
import SignedDataTestSupport
import Synchronization
import TestSupport
import Testing

@testable import Reconciler

/// Notification history waits what its `AttemptPlan` says, on the clock it is given: here a virtual one whose
/// timers fire at once, so the plan's seconds of backoff and `Retry-After` take no real time (no thread sleeps).
@Suite struct NotificationHistoryWaitTests {
    static let pki = try! TestPKI()

    /// A clock whose time moves only by the waits asked of it: each timer advances it and fires at once.
    final class SteppingClock: PipelineClock, @unchecked Sendable {
        private let lock = NSLock()
        private let epoch = Date()
        private var ticks: UInt64 = 0
        private var waitsValue: [UInt64] = []

        var waits: [UInt64] { lock.withLock { waitsValue } }
        func now() -> UInt64 { lock.withLock { ticks } }
        func date() -> Date { epoch.addingTimeInterval(Double(now()) / 1e9) }
        func schedule(after nanoseconds: UInt64, on queue: DispatchQueue, _ work: @escaping @Sendable () -> Void) {
            lock.withLock {
                ticks &+= nanoseconds
                waitsValue.append(nanoseconds)
            }
            queue.async(execute: work)
        }
    }

    @Test func retriesWaitThePlansDelayOnTheGivenClock() throws {
        // Production: a 429 asking for 7 s, then a 500, then an empty last page; the sandbox answers at once.
        let production = Mutex(0)
        let server = try LoopbackHTTPServer { request in
            guard !request.path.hasPrefix("/sandbox"), request.path.hasPrefix("/inApps/v1/notifications/history") else {
                return .json(#"{"notificationHistory":[],"hasMore":false}"#)
            }
            let n = production.withLock { count in
                count += 1
                return count
            }
            switch n {
            case 1: return .text(#"{"errorCode":4290000}"#, status: 429, headers: [("Retry-After", "7")])
            case 2: return .json(#"{"errorCode":5000001}"#, status: 500)
            default: return .json(#"{"notificationHistory":[],"hasMore":false}"#)
            }
        }
        defer { server.stop() }
        let database = try TestDatabase.make()
        defer { database.drop() }
        let connection = try database.connect()
        defer { connection.close() }
        let sql = EndToEndFixture.packageRoot.appendingPathComponent("sql").path
        for file in try MigrationDirectory(path: sql).files() {
            try connection.executeScript(try String(contentsOfFile: file.path, encoding: .utf8))
        }
        let http = CurlHTTPClient()
        defer { http.shutdown() }
        let api = AppStoreAPIConfiguration(
            key: try APIPrivateKey(pem: P256.Signing.PrivateKey().pemRepresentation),
            keyId: "ABC123DEFG",
            issuerId: "57246542-96fe-1a63-e053-0824d011072a",
            bundleId: TestPayloads.bundleId
        )
        let endpoints = ServerAPIEndpoints(production: server.baseURL, sandbox: server.baseURL + "/sandbox")
        let settings = ServerAPISettings(
            api: api,
            appAppleId: 1234,
            endpoints: endpoints,
            roots: TrustedRoots([Self.pki.root])
        )
        let clock = SteppingClock()
        let reader = try NotificationHistoryReader(
            connection: connection,
            client: ServerAPIClient(http: http, endpoints: endpoints, signer: try api.signer()),
            settings: settings,
            logger: Logger(label: "wait", factory: { _ in SwiftLogNoOpLogHandler() }),
            policy: AttemptPolicy(maxAttempts: 3),
            clock: clock
        )
        let started = ContinuousClock.now
        let summary = try reader.pull(runId: 1, asOf: clock.date(), lookback: 3600, dryRun: true)
        let elapsed = ContinuousClock.now - started

        #expect(summary.pages == 2)
        #expect(production.withLock { $0 } == 3)
        let second: UInt64 = 1_000_000_000
        let waits = clock.waits
        // The 429's wait is Apple's 7 s (counted from its answer; the plan's backoff is shorter), the 500's the
        // plan's backoff after a second failure in a row: full jitter under min(cap, 0.5 s * 2).
        // (The virtual clock started with the real one; the real time the pull took before the 429 adds to the wait.)
        let longest = try #require(waits.max())
        let realNanoseconds =
            UInt64(elapsed.components.seconds) * second + UInt64(elapsed.components.attoseconds / 1_000_000_000)
        #expect(longest >= 7 * second && longest <= 8 * second + realNanoseconds, "\(waits)")
        #expect(waits.filter { $0 < 7 * second }.allSatisfy { $0 <= second }, "\(waits)")
        #expect(clock.now() >= 7 * second)
        // Seven virtual seconds and more went by; the test did not wait them.
        #expect(elapsed < .seconds(7), "\(elapsed)")
    }
}
