/// One app's items in a run (`summary.json` `by_app`, docs/reports.md "Several apps"): the rows whose
/// `bundle_id` names it, by outcome and new state, and the requests made to Apple for them (the app's own rate
/// limit spent; switches and retries included). `no_app` items are rows of a bundle id no configured app owns.
public struct AppCounts: Sendable, Equatable, Codable {
    /// The bundle id; `(unknown)` for rows without one.
    public var id: String
    public var selected: Int
    public var requests: Int
    public var byOutcome: [String: Int]
    public var byNewState: [String: Int]

    enum CodingKeys: String, CodingKey {
        case id, selected, requests
        case byOutcome = "by_outcome"
        case byNewState = "by_new_state"
    }

    public init(id: String, selected: Int, requests: Int, byOutcome: [String: Int], byNewState: [String: Int]) {
        self.id = id
        self.selected = selected
        self.requests = requests
        self.byOutcome = byOutcome
        self.byNewState = byNewState
    }
}
