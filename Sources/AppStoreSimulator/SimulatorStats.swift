import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Traffic accounting and the `--max-rps` limiter, shared by every connection of a server.
///
/// One `Mutex` guards all of it: the critical sections are a few counter updates, far cheaper than
/// the request work, and a single lock keeps sequence numbers, the rate window and the counts coherent.
public final class SimulatorStats: Sendable {
    struct PathCounters {
        var requests = 0
        var http: [Int: Int] = [:]
        var apple: [Int: Int] = [:]
    }

    /// Timestamps (monotonic ns) within the last `span` (a second, or an hour for the report downloads), oldest
    /// first, to find the busiest span.
    struct Window {
        var span: UInt64 = 1_000_000_000
        var times: [UInt64] = []
        var head = 0
        var peak = 0

        mutating func add(_ now: UInt64) {
            times.append(now)
            while head < times.count, times[head] + span <= now { head += 1 }
            peak = max(peak, times.count - head)
            if head > 4096, head * 2 > times.count {
                times.removeFirst(head)
                head = 0
            }
        }

        /// Number of timestamps in (now - span, now].
        mutating func count(at now: UInt64) -> Int {
            while head < times.count, times[head] + span <= now { head += 1 }
            return times.count - head
        }
    }

    struct State {
        var sequence: UInt64 = 0
        var arrivals = Window()
        var admitted = Window()
        var rateLimited = 0
        var paths: [String: PathCounters] = [:]
        var faults: [FaultKind: Int] = [:]
        var authFailures: [String: Int] = [:]
        /// Per Server API endpoint and environment (`ServerAPIRoute.statsPath`): admitted requests and 429s.
        var apiWindows: [String: Window] = [:]
        var apiLimited: [String: Int] = [:]
        var apiLimits: [String: Int] = [:]
        var apiFaults: [String: Int] = [:]
        /// App Store Connect report downloads admitted in the last hour (one team key), and the 429s.
        var reports = Window(span: 3_600_000_000_000)
        var reportsLimited = 0
        var connectionsAccepted = 0
        var connectionsOpen = 0
        var peakConnections = 0
    }

    /// Outcome of admitting one verify request.
    public struct Admission: Sendable {
        /// Position of the request in arrival order; fault decisions are a function of it.
        public var sequence: UInt64
        /// False when `--max-rps` turned it away (answer 429).
        public var admitted: Bool
    }

    private let state = Mutex(State())
    public let maxRequestsPerSecond: Int?

    public init(maxRequestsPerSecond: Int?) {
        self.maxRequestsPerSecond = maxRequestsPerSecond
    }

    /// Numbers the request and applies the limit: admitted only if fewer than R requests were admitted
    /// in the second before `now` (a sliding window, so no 1-second window ever holds more than R).
    public func admit(now: UInt64 = DispatchTimeNanos.now()) -> Admission {
        state.withLock { s in
            let seq = s.sequence
            s.sequence += 1
            s.arrivals.add(now)
            if let limit = maxRequestsPerSecond, s.admitted.count(at: now) >= limit {
                s.rateLimited += 1
                return Admission(sequence: seq, admitted: false)
            }
            s.admitted.add(now)
            return Admission(sequence: seq, admitted: true)
        }
    }

    /// Apple's per-endpoint limit: admitted only if fewer than `limit` requests to `key` were admitted in the
    /// second before `now`. When refused, also returns when (monotonic ns) the oldest of them leaves the window.
    public func admitServerAPI(
        key: String,
        limit: Int?,
        now: UInt64 = DispatchTimeNanos.now()
    )
        -> (admitted: Bool, freeAt: UInt64)
    {
        state.withLock { s in
            if let limit { s.apiLimits[key] = limit }
            // Mutated in place through the subscript: a copy of the window would copy its timestamps.
            if let limit, s.apiWindows[key, default: Window()].count(at: now) >= limit {
                s.apiLimited[key, default: 0] += 1
                let times = s.apiWindows[key]?.times ?? []
                return (false, (times.count >= limit ? times[times.count - limit] : now) + 1_000_000_000)
            }
            s.apiWindows[key, default: Window()].add(now)
            return (true, now)
        }
    }

    /// The App Store Connect API's hourly budget (`X-Rate-Limit: user-hour-lim:L;user-hour-rem:N;`): admitted only
    /// if fewer than `limit` downloads were admitted in the hour before `now`; `remaining` is what is left after it.
    /// With `consume` false (a request refused before it counts, a 401) nothing is added.
    public func admitReport(
        limit: Int,
        consume: Bool = true,
        now: UInt64 = DispatchTimeNanos.now()
    ) -> (admitted: Bool, remaining: Int) {
        state.withLock { s in
            let used = s.reports.count(at: now)
            guard consume else { return (used < limit, max(0, limit - used)) }
            guard used < limit else {
                s.reportsLimited += 1
                return (false, 0)
            }
            s.reports.add(now)
            return (true, limit - used - 1)
        }
    }

    /// A Server API fault (`ServerAPIFault`) that was injected.
    public func recordServerAPIFault(_ name: String) {
        state.withLock { s in s.apiFaults[name, default: 0] += 1 }
    }

    public func record(path: String, httpStatus: Int, appleStatus: Int?, fault: FaultKind?) {
        state.withLock { s in
            Self.bump(&s.paths[path, default: PathCounters()], httpStatus, appleStatus)
            if let fault { s.faults[fault, default: 0] += 1 }
        }
    }

    /// One Server API request refused with 401, by reason (`APITokenAuthenticator.Failure`).
    public func recordAuthFailure(_ reason: String) {
        state.withLock { s in s.authFailures[reason, default: 0] += 1 }
    }

    private static func bump(_ c: inout PathCounters, _ http: Int, _ apple: Int?) {
        c.requests += 1
        c.http[http, default: 0] += 1
        if let apple { c.apple[apple, default: 0] += 1 }
    }

    public func connectionOpened() {
        state.withLock { s in
            s.connectionsAccepted += 1
            s.connectionsOpen += 1
            s.peakConnections = max(s.peakConnections, s.connectionsOpen)
        }
    }

    public func connectionClosed() {
        state.withLock { s in s.connectionsOpen = max(0, s.connectionsOpen - 1) }
    }

    /// Clears counters and peaks (open connections stay counted as open).
    public func reset() {
        state.withLock { s in
            let open = s.connectionsOpen
            s = State()
            s.connectionsOpen = open
            s.peakConnections = open
        }
    }

    /// The `GET /_stats` body: keys sorted, so it is stable.
    public func json() -> [UInt8] {
        state.withLock { s in
            var w = JSONWriter(capacity: 1024)
            w.beginObject()
            w.key("requests_total")
            w.int(Int64(s.sequence))
            w.key("peak_requests_per_second")
            w.int(Int64(s.arrivals.peak))
            w.key("peak_admitted_per_second")
            w.int(Int64(s.admitted.peak))
            w.key("max_rps")
            if let m = maxRequestsPerSecond { w.int(Int64(m)) } else { w.null() }
            w.key("rate_limited")
            w.int(Int64(s.rateLimited))
            w.key("connections_accepted")
            w.int(Int64(s.connectionsAccepted))
            w.key("connections_open")
            w.int(Int64(s.connectionsOpen))
            w.key("peak_concurrent_connections")
            w.int(Int64(s.peakConnections))
            w.key("paths")
            Self.writePaths(&w, s.paths)
            w.key("faults")
            w.beginObject()
            for kind in FaultKind.allCases {
                w.key(kind.rawValue)
                w.int(Int64(s.faults[kind] ?? 0))
            }
            w.endObject()
            w.key("server_api_limits")
            Self.writeServerAPILimits(&w, s)
            w.key("server_api_faults")
            w.beginObject()
            for name in s.apiFaults.keys.sorted() {
                w.key(name)
                w.int(Int64(s.apiFaults[name] ?? 0))
            }
            w.endObject()
            w.key("auth_failures")
            w.beginObject()
            for reason in APITokenAuthenticator.Failure.allCases {
                w.key(reason.rawValue)
                w.int(Int64(s.authFailures[reason.rawValue] ?? 0))
            }
            w.endObject()
            w.endObject()
            return w.bytes
        }
    }

    /// `paths`: per path, the requests and their counts by HTTP and by Apple status, all keys sorted.
    private static func writePaths(_ w: inout JSONWriter, _ paths: [String: PathCounters]) {
        w.beginObject()
        for path in paths.keys.sorted() {
            guard let c = paths[path] else { continue }
            w.key(path)
            w.beginObject()
            w.key("requests")
            w.int(Int64(c.requests))
            w.key("http_status")
            writeCounts(&w, c.http)
            w.key("apple_status")
            writeCounts(&w, c.apple)
            w.endObject()
        }
        w.endObject()
    }

    /// Counts by status code, codes in ascending order.
    private static func writeCounts(_ w: inout JSONWriter, _ counts: [Int: Int]) {
        w.beginObject()
        for k in counts.keys.sorted() {
            w.key(String(k))
            w.int(Int64(counts[k] ?? 0))
        }
        w.endObject()
    }

    /// `server_api_limits`: per endpoint and environment, the limit, the busiest second's admitted requests and
    /// the 429s, keys sorted.
    private static func writeServerAPILimits(_ w: inout JSONWriter, _ s: State) {
        w.beginObject()
        for key in s.apiWindows.keys.sorted() {
            w.key(key)
            w.beginObject()
            w.key("limit_per_second")
            if let l = s.apiLimits[key] { w.int(Int64(l)) } else { w.null() }
            w.key("peak_admitted_per_second")
            w.int(Int64(s.apiWindows[key]?.peak ?? 0))
            w.key("rate_limited")
            w.int(Int64(s.apiLimited[key] ?? 0))
            w.endObject()
        }
        w.endObject()
    }
}
