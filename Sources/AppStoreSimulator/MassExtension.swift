/// A request to extend the renewal date of every eligible active subscriber of one product in some storefronts
/// (Extend Subscription Renewal Dates for All Active Subscribers): RENEWAL_EXTENDED for each subscription extended,
/// RENEWAL_EXTENSION / FAILURE for each one that was not, then RENEWAL_EXTENSION / SUMMARY (a `summary`, no `data`)
/// when Apple completed it.
///
/// Simplification: of the active subscribers of the product in those storefronts at `requestedAt`, only the
/// silent-renewal ones whose current period runs through the anchor are extended (their rows are due anyway, so a
/// nightly run sees the new expiry); the others are reported as failed and keep their dates.
public struct MassExtension: Sendable {
    public struct Subscription: Sendable {
        public var family: Int
        public var plan: Int
        /// When Apple processed this subscription (between the request and its completion).
        public var at: Int64
    }

    public var requestIdentifier: String
    public var productId: String
    public var storefrontCountryCodes: [String]
    public var requestedAt: Int64
    public var completedAt: Int64
    public var days: Int64
    public var succeeded: [Subscription]
    public var failed: [Subscription]
}
