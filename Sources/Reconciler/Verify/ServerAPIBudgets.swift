import ReceiptDomain

/// The App Store Server API's rate limits the run spends, one per endpoint and environment: Apple's
/// production figures by default (about 50 requests per second per app for Get All Subscription Statuses,
/// Get Transaction History and Get Notification History), sandbox a tenth of them, each capped by `--rate`
/// (docs/architecture.md, "The App Store Server API").
public struct ServerAPIBudgets: Sendable, Equatable {
    public static let appleProductionRate: Double = 50
    public static let sandboxShare: Double = 0.1

    public var statuses: Double
    public var history: Double
    public var notifications: Double
    /// The app these limits belong to in a run of several apps (`RateBudget.app`); nil in a one-app run.
    public var app: String?

    public init(
        statuses: Double = ServerAPIBudgets.appleProductionRate,
        history: Double = ServerAPIBudgets.appleProductionRate,
        notifications: Double = ServerAPIBudgets.appleProductionRate,
        app: String? = nil
    ) {
        self.statuses = statuses
        self.history = history
        self.notifications = notifications
        self.app = app
    }

    /// Each limit no higher than `cap` (`--rate`).
    public func capped(at cap: Double) -> ServerAPIBudgets {
        ServerAPIBudgets(
            statuses: min(statuses, cap),
            history: min(history, cap),
            notifications: min(notifications, cap),
            app: app
        )
    }

    public func statuses(_ environment: AppleEnvironment) -> RateBudget {
        budget("GET /inApps/v1/subscriptions", statuses, environment)
    }

    public func history(_ environment: AppleEnvironment) -> RateBudget {
        budget("GET /inApps/v2/history", history, environment)
    }

    public func notificationHistory(_ environment: AppleEnvironment) -> RateBudget {
        budget("POST /inApps/v1/notifications/history", notifications, environment)
    }

    private func budget(_ name: String, _ rate: Double, _ environment: AppleEnvironment) -> RateBudget {
        environment == .production
            ? RateBudget(name: name, rate: rate, app: app)
            : RateBudget(name: name + " (Sandbox)", rate: max(1, rate * Self.sandboxShare), app: app)
    }
}
