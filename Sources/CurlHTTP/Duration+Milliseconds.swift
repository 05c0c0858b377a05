import CivilTime

extension Duration {
    /// Whole milliseconds for curl's `*_MS` options, at least 1 (curl treats 0 as "no timeout") and at most
    /// `Int32.max`.
    var curlMilliseconds: Int { max(1, clampedMilliseconds) }
}
