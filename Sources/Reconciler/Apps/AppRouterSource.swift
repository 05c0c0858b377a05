/// The Apple source of a run over several apps (docs/architecture.md, "Several apps"): each item goes to the
/// source of the app its row's `bundle_id` names, with that app's credentials and rate budgets (Apple's limits
/// are per app, so each app's requests spend budgets of their own). A row whose bundle id names no configured
/// app ends `no_app` without a request. A row with no bundle id belongs to `defaultApp` (a one-app run's app);
/// with several apps it has none.
public final class AppRouterSource: AppleSource {
    /// Bundle id -> that app's source.
    public let sources: [String: any AppleSource]
    public let defaultApp: String?

    public init(sources: [String: any AppleSource], defaultApp: String?) {
        self.sources = sources
        self.defaultApp = defaultApp
    }

    /// The app an item belongs to: its row's bundle id, else the default app.
    func app(of item: WorkItem) -> String? {
        item.stored.bundleId ?? defaultApp
    }

    public func verification(for item: WorkItem) -> any SourceVerification {
        let app = app(of: item)
        guard let app, let source = sources[app] else {
            return NoAppVerification(bundleId: app ?? "(none)")
        }
        return source.verification(for: item)
    }

    public func revise(_ result: ItemResult, afterConfigurationError reason: String) -> ItemResult {
        guard let app = app(of: result.item), let source = sources[app] else { return result }
        return source.revise(result, afterConfigurationError: reason)
    }

    public func host(of request: SourceRequest) -> String {
        let source = (request.budget.app ?? defaultApp).flatMap { sources[$0] }
        return source?.host(of: request) ?? "Apple (\(request.budget))"
    }
}
