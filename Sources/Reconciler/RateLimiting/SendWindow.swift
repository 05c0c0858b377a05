/// The hard guarantee on requests as Apple counts them: never more than `floor(rate)` in any one-second
/// window, and consecutive sends at least 0.9 of an interval (`1 / rate`) apart (docs/architecture.md,
/// "The send window").
///
/// The token bucket spaces *reservations*; timers on a busy queue can still fire late and together, and
/// after a stall a naive sender would catch up in a burst. Counting sends alone is not enough either: Apple
/// (and the simulator) count a request when it *arrives*, and delivery jitter on a loaded machine bunches a
/// few arrivals closer than their sends were. So each send occupies one of `capacity` slots from its send
/// tick until its *release*, `min(answerTick, sentTick + answerGuard) + 1 s`; while unanswered, the release
/// is the pessimistic `sentTick + answerGuard + 1 s`. A send is admitted only when fewer than `capacity`
/// slots are still occupied and the previous send left at least `minimumSpacing` ago.
///
/// Why this is exact: whatever instant Apple counts a request at lies between our send tick (taken before
/// the request is handed to the HTTP client) and our answer tick (taken after the answer came back). Say
/// k requests are counted within some [T, T + 1 s), and j is the one of them admitted last. Every other
/// one, i, was sent no later than j, and its release is at least its count instant + 1 s >= T + 1 s >
/// count_j >= send_j: all k - 1 still occupied their slot when j was admitted, so k - 1 < capacity, i.e.
/// k <= capacity. That holds whenever every answer comes back within `answerGuard`; a request answered
/// later is released at `send + answerGuard + 1 s`, which still covers it as long as its delay to Apple
/// (count instant minus send tick) exceeds another's by less than `answerGuard`.
///
/// Pure: the caller passes monotonic ticks (nanoseconds, see `MonotonicClock`), reports answers with
/// `answered(sentAt:now:)` and schedules its own wake-up; not thread-safe (guard it with the caller's
/// queue or lock).
public struct SendWindow: Sendable {
    /// How long after its send an unanswered request still holds its slot beyond the second: 50 ms.
    ///
    /// A slot is held 1 s + min(latency, `answerGuard`), so the window admits about `capacity` sends per
    /// that much time: about 0.5% below the rate on loopback (a few milliseconds of latency), at most 4.8%
    /// against Apple's real latency (over 50 ms). Larger would cover a more uneven delay to Apple for
    /// slow answers at a higher cost; the proof in the type's comment needs no more when answers come back
    /// within it.
    public static let answerGuard: UInt64 = 50_000_000

    /// One send: its tick, and the tick from which its slot is free again.
    private struct Entry: Sendable {
        var sent: UInt64
        var release: UInt64
        var answered: Bool
    }

    /// Requests per second in force.
    public private(set) var rate: Double
    /// Sends that may still occupy a slot, in send order (ticks non-decreasing) from `head`; entries before
    /// `head` are released and dropped.
    private var entries: [Entry] = []
    private var head = 0
    /// The last send's tick (kept after its entry is dropped, for the spacing).
    private var lastSent: UInt64?

    /// One second in nanoseconds.
    private static let window: UInt64 = 1_000_000_000

    public init(rate: Double) {
        self.rate = Self.clamped(rate)
    }

    /// At most this many sends in any one-second window: `floor(rate)`, at least 1 (and at most 1e9, so no
    /// rate converts past `Int`; the flags are bounded far below it).
    public var capacity: Int { max(1, Int(min(rate, 1e9).rounded(.down))) }

    /// The least spacing between two sends: 0.9 of `1 / rate`.
    public var minimumSpacing: UInt64 {
        let interval = (1_000_000_000.0 / rate).rounded(.up)
        return interval >= 1.8e19 ? UInt64.max / 2 : UInt64(interval) / 10 * 9
    }

    /// Sends that may still occupy a slot (for tests).
    var heldCount: Int { entries.count - head }

    /// Changes the rate for sends from now on (the recorded sends keep their slots: after lowering the rate,
    /// nothing more leaves until fewer than the new capacity are occupied).
    public mutating func setRate(_ newRate: Double) {
        rate = Self.clamped(newRate)
    }

    /// The earliest tick at which the next request may leave (0 when nothing was sent yet).
    public func earliestSend() -> UInt64 {
        var notBefore: UInt64 = 0
        let held = entries.count - head
        if held >= capacity {
            // With the releases sorted r_0 ... r_(held-1), fewer than `capacity` slots are occupied from
            // r_(held - capacity) on.
            notBefore = Self.smallest(held - capacity, of: entries[head...].lazy.map(\.release))
        }
        if let lastSent { notBefore = max(notBefore, lastSent &+ minimumSpacing) }
        return notBefore
    }

    /// Sends now if the window allows it: returns nil after recording the send at `now`, or the nanoseconds
    /// to wait before asking again (nothing recorded).
    public mutating func trySend(now: UInt64) -> UInt64? {
        prune(now: now)
        let notBefore = earliestSend()
        if now < notBefore { return notBefore - now }
        entries.append(Entry(sent: now, release: now &+ Self.answerGuard &+ Self.window, answered: false))
        lastSent = now
        return nil
    }

    /// Records the answer to the request sent at `sentAt`: its slot is free from
    /// `min(now, sentAt + answerGuard) + 1 s`. A tick the window does not hold (never sent, already answered,
    /// or released long ago) changes nothing.
    public mutating func answered(sentAt: UInt64, now: UInt64) {
        var low = head
        var high = entries.count
        while low < high {
            let middle = low + (high - low) / 2
            if entries[middle].sent < sentAt { low = middle + 1 } else { high = middle }
        }
        while low < entries.count, entries[low].sent == sentAt {
            if !entries[low].answered {
                let answer = min(max(now, sentAt), sentAt &+ Self.answerGuard)
                entries[low].release = answer &+ Self.window
                entries[low].answered = true
                return
            }
            low += 1
        }
    }

    /// Drops the oldest sends whose slot is free at `now` (an unanswered send's only once its pessimistic
    /// release has passed; an answered one's release never moves again). Later sends released earlier stay
    /// until those before them go: they cost only time in `earliestSend`.
    private mutating func prune(now: UInt64) {
        while head < entries.count, entries[head].release <= now { head += 1 }
        if head == entries.count {
            entries.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 1024, head * 2 > entries.count {
            entries.removeFirst(head)
            head = 0
        }
    }

    /// The `index`-th smallest (from 0) of `values`: a short sorted list of the smallest seen when `index` is
    /// small (the usual case: a few sends beyond the capacity), a full sort otherwise.
    private static func smallest(_ index: Int, of values: some Collection<UInt64>) -> UInt64 {
        if index == 0 { return values.min() ?? 0 }
        if index >= 32 { return values.sorted()[index] }
        var least: [UInt64] = []
        least.reserveCapacity(index + 1)
        for value in values {
            if least.count == index + 1 {
                guard let largest = least.last, value < largest else { continue }
                least.removeLast()
            }
            var position = least.count
            while position > 0, least[position - 1] > value { position -= 1 }
            least.insert(value, at: position)
        }
        return least[index]
    }

    private static func clamped(_ rate: Double) -> Double {
        rate.isFinite ? max(rate, TokenBucket.minimumRate) : TokenBucket.minimumRate
    }
}
