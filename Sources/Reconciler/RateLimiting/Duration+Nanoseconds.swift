extension Duration {
    /// The duration as whole nanoseconds, clamped to `0...UInt64.max` (negative durations become 0).
    var clampedNanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        if seconds < 0 || (seconds == 0 && attoseconds <= 0) { return 0 }
        let (secNanos, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return .max }
        let (total, overflow2) = secNanos.addingReportingOverflow(UInt64(max(0, attoseconds) / 1_000_000_000))
        return overflow2 ? .max : total
    }
}
