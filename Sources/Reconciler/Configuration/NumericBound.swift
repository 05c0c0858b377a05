import Foundation

/// The values one numeric setting accepts (docs/operations.md, "Bounds of every numeric setting"): a closed
/// range, and how to show it in an error and in the docs. The ranges themselves are in `SettingBounds`.
///
/// A value is checked where it is parsed (a flag: exit 64; the apps file: exit 78), before any run exists, so
/// nothing later converts an absurd value (Double to Int, seconds to Dispatch's nanoseconds, a PostgreSQL
/// interval). NaN and the infinities are outside every range.
public struct NumericBound: Sendable, Equatable {
    /// What the number counts, for the range's text.
    public enum Unit: Sendable, Equatable {
        /// Requests per second.
        case perSecond
        /// Seconds, written as a plain number (`--request-timeout 30`).
        case seconds
        /// A duration flag (`24h`, `62d`): shown in the largest unit that divides it.
        case duration
        /// A whole number (items, attempts, nights).
        case count
        /// A share from 0 to 1.
        case fraction
    }

    public let minimum: Double
    public let maximum: Double
    public let unit: Unit

    public init(_ minimum: Double, _ maximum: Double, _ unit: Unit) {
        precondition(minimum <= maximum, "a bound's minimum is above its maximum")
        self.minimum = minimum
        self.maximum = maximum
        self.unit = unit
    }

    /// Whether `value` is allowed (never NaN or infinite).
    public func contains(_ value: Double) -> Bool {
        value.isFinite && value >= minimum && value <= maximum
    }

    /// Whether the whole number `value` is allowed.
    public func contains(_ value: Int) -> Bool { contains(Double(value)) }

    /// The allowed values, e.g. `from 0.1 to 1000000 requests per second`, `from 0s to 3650d`.
    public var rangeText: String {
        let suffix: String
        switch unit {
        case .perSecond: suffix = " requests per second"
        case .seconds: suffix = " seconds"
        case .duration, .count, .fraction: suffix = ""
        }
        return "from \(show(minimum)) to \(show(maximum))\(suffix)"
    }

    /// Why `value` (as the user wrote it: `shown`) is refused, naming the setting and the range; nil when allowed.
    public func problem(setting: String, value: Double, shown: String) -> String? {
        contains(value) ? nil : "\(setting) must be \(rangeText), got \(shown.prefix(60))"
    }

    /// One end of the range as the user would write it.
    public func show(_ value: Double) -> String {
        unit == .duration ? Self.durationText(value) : Self.numberText(value)
    }

    /// `1000000`, `0.1`: whole numbers without a fraction, others as Swift prints them.
    public static func numberText(_ value: Double) -> String {
        if value.isFinite, value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }

    /// Seconds in the largest unit of `DurationArgument` that divides them: `3650d`, `1h`, `90s`, `0s`.
    public static func durationText(_ seconds: Double) -> String {
        guard seconds.isFinite else { return "\(seconds)" }
        for (unit, size) in [("d", 86_400.0), ("h", 3_600.0), ("m", 60.0)]
        where seconds >= size && seconds.truncatingRemainder(dividingBy: size) == 0 {
            return numberText(seconds / size) + unit
        }
        return numberText(seconds) + "s"
    }
}
