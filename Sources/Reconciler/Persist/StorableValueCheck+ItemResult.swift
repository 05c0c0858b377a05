extension StorableValueCheck {
    /// The first value of `result` that cannot be stored and refuses the item, described by field name
    /// (never by value for texts: a receipt must never reach a reason), or nil when every value fits.
    public static func problem(in result: ItemResult) -> String? {
        guard case .decided(let decision) = result.kind else { return nil }
        return problem(in: decision)
    }
}
