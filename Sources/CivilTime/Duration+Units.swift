/// `Duration` in the units the rest of the code needs, converted in one place: clamped, never trapping.
extension Duration {
    /// Whole nanoseconds, clamped to `0...UInt64.max` (negative durations become 0).
    public var clampedNanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        if seconds < 0 || (seconds == 0 && attoseconds <= 0) { return 0 }
        let (secondNanos, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return .max }
        let (total, overflowTotal) = secondNanos.addingReportingOverflow(UInt64(max(0, attoseconds) / 1_000_000_000))
        return overflowTotal ? .max : total
    }

    /// Whole milliseconds, clamped to `0...Int(Int32.max)` (negative durations become 0).
    public var clampedMilliseconds: Int {
        Int(min(clampedNanoseconds / 1_000_000, UInt64(Int32.max)))
    }

    /// Seconds as a `Double` (for rates and logs).
    public var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
