extension Duration {
    /// Whole milliseconds for curl's `*_MS` options, at least 1 (curl treats 0 as "no timeout")
    /// and clamped so the conversion never overflows.
    var curlMilliseconds: Int {
        let (seconds, attoseconds) = components
        if seconds < 0 || (seconds == 0 && attoseconds <= 0) {
            return 1
        }
        if seconds >= Int64(Int32.max) {
            return Int(Int32.max)
        }
        let millis = Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
        return max(1, millis)
    }
}
