import Testing

@testable import Reconciler

/// The one-second send window on a virtual clock (nanosecond ticks): what leaves, and when.
@Suite struct SendWindowTests {
    static let second: UInt64 = 1_000_000_000

    /// Drives `window` like the pipeline does: senders arrive at the `attempts` ticks (timers firing,
    /// possibly late and together) and wait in arrival order; one timer wakes the head when the window
    /// says so. Returns the send ticks.
    static func simulate(_ window: inout SendWindow, attempts: [UInt64]) -> [UInt64] {
        let arrivals = attempts.sorted()
        var next = 0
        var held = 0
        var sent: [UInt64] = []
        var now = arrivals.first ?? 0
        while next < arrivals.count || held > 0 {
            while next < arrivals.count, arrivals[next] <= now {
                held += 1
                next += 1
            }
            var wake: UInt64?
            while held > 0 {
                if let wait = window.trySend(now: now) {
                    wake = now + wait
                    break
                }
                sent.append(now)
                held -= 1
            }
            let nextArrival = next < arrivals.count ? arrivals[next] : nil
            switch (wake, nextArrival) {
            case let (w?, a?): now = min(w, a)
            case let (w?, nil): now = w
            case let (nil, a?): now = a
            case (nil, nil): break
            }
        }
        return sent
    }

    /// The most sends in any half-open one-second window [t, t + 1 s).
    static func busiestSecond(_ sent: [UInt64]) -> Int {
        var best = 0
        var start = 0
        for end in sent.indices {
            while sent[end] - sent[start] >= second { start += 1 }
            best = max(best, end - start + 1)
        }
        return best
    }

    @Test func neverMoreThanFloorRatePerSecondAtSteadyDemand() {
        var window = SendWindow(rate: 200.7)
        let attempts = (0..<2000).map { UInt64($0) * 1_000_000 }  // one ask per millisecond for 2 s
        let sent = Self.simulate(&window, attempts: attempts)
        #expect(sent.count == 2000)
        #expect(Self.busiestSecond(sent) == 200)
    }

    @Test func lateTimersFiringTogetherLeaveOneByOne() {
        var window = SendWindow(rate: 50)
        // 50 timers due over a second all fire at the same late instant.
        let sent = Self.simulate(&window, attempts: Array(repeating: 3 * Self.second, count: 50))
        #expect(sent.first == 3 * Self.second)
        for (a, b) in zip(sent, sent.dropFirst()) {
            #expect(b - a >= window.minimumSpacing, "two sends \(b - a) ns apart")
        }
        #expect(Self.busiestSecond(sent) <= 50)
    }

    @Test func noBurstAfterAStall() {
        var window = SendWindow(rate: 100)
        // Steady sending for a second, a 5-second stall, then 300 senders all at once.
        var attempts = (0..<100).map { UInt64($0) * 10_000_000 }
        attempts += Array(repeating: 6 * Self.second, count: 300)
        let sent = Self.simulate(&window, attempts: attempts)
        #expect(sent.count == 400)
        #expect(Self.busiestSecond(sent) <= 100)
        let afterStall = sent.filter { $0 >= 6 * Self.second && $0 < 7 * Self.second }
        #expect(afterStall.count <= 100)
        #expect(afterStall.count >= 100 - 1, "the window should still admit close to the rate: \(afterStall.count)")
    }

    @Test func exactlyFloorRateFitInTheFirstWindowWithSpacing() {
        var window = SendWindow(rate: 10)
        #expect(window.capacity == 10)
        let sent = Self.simulate(&window, attempts: Array(repeating: 0, count: 11))
        // 10 sends spaced 90 ms apart fit in [0, 1 s); the 11th waits until the first leaves the window.
        #expect(sent.prefix(10).allSatisfy { $0 < Self.second })
        #expect(sent[10] >= Self.second)
    }

    @Test func slowerRateTakesEffectForLaterSends() {
        var window = SendWindow(rate: 100)
        _ = Self.simulate(&window, attempts: Array(repeating: 0, count: 100))
        window.setRate(10)
        #expect(window.capacity == 10)
        let later = Self.simulate(&window, attempts: Array(repeating: 2 * Self.second, count: 30))
        #expect(Self.busiestSecond(later) <= 10)
    }

    @Test func ratesBelowOneStillSendOneAtATime() {
        var window = SendWindow(rate: 0.5)
        #expect(window.capacity == 1)
        let sent = Self.simulate(&window, attempts: [0, 0, 0])
        #expect(sent[1] - sent[0] >= window.minimumSpacing)
        #expect(window.minimumSpacing == 1_800_000_000)
    }
}
