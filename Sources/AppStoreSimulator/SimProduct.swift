/// A subscription product of the simulated app: its id, its subscription group and its renewal period.
public struct SimProduct: Sendable, Hashable {
    /// How long one paid period lasts (production lengths; sandbox shrinks them).
    public enum Period: String, Sendable {
        case week, month, year
    }

    public let productId: String
    public let groupId: String
    public let period: Period
    /// Apple's service level inside the group: lower is higher (1 is the top tier).
    public let level: Int

    /// End of one period (or `count` periods) started at `start`, in the given environment.
    ///
    /// Production uses calendar arithmetic (a month renews on the same day of month); sandbox uses
    /// Apple's accelerated lengths: 1 week -> 3 min, 1 month -> 5 min, 1 year -> 1 hour.
    public func periodEnd(from start: Int64, count: Int64 = 1, sandbox: Bool) -> Int64 {
        if sandbox {
            switch period {
            case .week: return start + count * 3 * SimTime.minute
            case .month: return start + count * 5 * SimTime.minute
            case .year: return start + count * SimTime.hour
            }
        }
        switch period {
        case .week: return start + count * 7 * SimTime.day
        case .month: return SimTime.addMonths(start, count)
        case .year: return SimTime.addMonths(start, 12 * count)
        }
    }

    /// The name a developer gives it in App Store Connect (`pro monthly`): `catalog.csv`'s `display_name` and the
    /// reports' subscription name and title.
    public var displayName: String { productId.split(separator: ".").suffix(2).joined(separator: " ") }

    /// Nominal length, for choosing times; not used for expiry arithmetic.
    public func nominalLength(sandbox: Bool) -> Int64 { periodEnd(from: 0, sandbox: sandbox) }
}
