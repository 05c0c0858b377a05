/// Where a selected subscription stands in its run, as stored in `reconciliation_items.status`: `pending` until the
/// writer stores its result, then `done` (whatever the outcome).
public enum ItemStatus: String, Sendable, Equatable {
    case pending, done

    /// Reads a stored value; anything else was written by a newer version or by hand and is named, never guessed at.
    static func stored(_ value: String) throws -> ItemStatus {
        guard let status = ItemStatus(rawValue: value) else {
            throw UnknownStoredValueError(column: "reconciliation_items.status", value: value)
        }
        return status
    }
}
