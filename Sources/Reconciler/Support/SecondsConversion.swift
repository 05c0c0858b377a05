/// Seconds (a `Double` setting) to the whole milliseconds Dispatch and `Duration` take, without ever trapping
/// (docs/operations.md, "Bounds of every numeric setting"): the flags are bounded when parsed, and this keeps a
/// value from elsewhere (a run's stored parameters, a caller in code) from crashing the conversion.
public enum SecondsConversion {
    /// The largest value returned: about 31 years, far beyond any bound, and `* 1_000_000` still fits an `Int64`.
    public static let maximumMilliseconds: Int64 = 1_000_000_000_000

    /// `seconds * 1000` rounded down, within 0...`maximumMilliseconds` (NaN and negatives are 0).
    public static func milliseconds(_ seconds: Double) -> Int64 {
        let value = seconds * 1000
        guard value > 0 else { return 0 }
        guard value < Double(maximumMilliseconds) else { return maximumMilliseconds }
        return Int64(value)
    }
}
