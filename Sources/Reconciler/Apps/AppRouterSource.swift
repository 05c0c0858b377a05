/// The Apple source of a run over several apps (docs/architecture.md, "Several apps"): each item goes to the
/// source of the app its row's `bundle_id` names, with that app's credentials and rate budgets (Apple's limits
/// are per app, so each app's requests spend budgets of their own). A row whose bundle id names no configured
/// app ends `no_app` without a request. A row with no bundle id belongs to `defaultApp` (a one-app run's app);
/// with several apps it has none. A row's bundle id names an app in any case (`BundleIdRule`).
public final class AppRouterSource: AppleSource {
    /// `BundleIdRule.key` of each app's bundle id -> that app's source.
    public let sources: [String: any AppleSource]
    public let defaultApp: String?

    public init(sources: [String: any AppleSource], defaultApp: String?) {
        self.sources = Dictionary(sources.map { (BundleIdRule.key($0.key), $0.value) }, uniquingKeysWith: { a, _ in a })
        self.defaultApp = defaultApp
    }

    /// The source of the app `bundleId` names, in any case.
    func source(of bundleId: String?) -> (any AppleSource)? {
        bundleId.flatMap { sources[BundleIdRule.key($0)] }
    }

    /// The app an item belongs to: its row's bundle id, else the default app.
    func app(of item: WorkItem) -> String? {
        item.stored.bundleId ?? defaultApp
    }

    public func verification(for item: WorkItem) -> any SourceVerification {
        let app = app(of: item)
        guard let source = source(of: app) else {
            return NoAppVerification(bundleId: app ?? "(none)")
        }
        return source.verification(for: item)
    }

    public func revise(_ result: ItemResult, afterConfigurationError reason: String) -> ItemResult {
        guard let source = source(of: app(of: result.item)) else { return result }
        return source.revise(result, afterConfigurationError: reason)
    }

    public func host(of request: SourceRequest) -> String {
        let source = source(of: request.budget.app ?? defaultApp)
        return source?.host(of: request) ?? "Apple (\(request.budget))"
    }
}
