import NIOCore

/// Everything `appstore-simulator serve` is told: where to listen, which population, which faults.
public struct SimulatorConfiguration: Sendable {
    /// The documented default shared secret when neither the environment nor a file gives one.
    public static let defaultSharedSecret = "sim-shared-secret"

    public var host: String = "127.0.0.1"
    public var port: Int = 0
    public var seed: UInt64 = 1
    public var subscriptions: Int = 1000
    /// Freeze the clock at this instant (ms); nil = real time.
    public var now: Int64?
    /// The instant the population's scenarios are built around; nil = `now`, else the start time.
    public var anchor: Int64?
    public var bundleId: String = "com.example.renewals"
    /// Customers whose purchases never reached the app's database (`Population.lostOrders`).
    public var lostOrders = 0
    /// Which kind of world: the test scenarios or a month like a real app's (`PopulationMix`).
    public var mix = PopulationMix.scenarios
    public var sharedSecret: String = SimulatorConfiguration.defaultSharedSecret
    /// Answer 21004 (shared secret mismatch) to every well-formed verifyReceipt request.
    public var secretMismatchForAll = false
    public var faults: FaultPlan
    /// Turn away requests over this many in any one-second window with 429.
    public var maxRequestsPerSecond: Int?
    /// The Server API's per-endpoint limits (Apple's figures unless changed).
    public var serverAPILimits = ServerAPILimits.apple
    public var threads: Int = System.coreCount
    /// The App Store Connect API's report downloads per rolling hour (Apple: 3600 per key); lower it to reach the 429.
    public var reportsHourlyLimit = 3600

    public init(seed: UInt64 = 1, subscriptions: Int = 1000, now: Int64? = nil) {
        self.seed = seed
        self.subscriptions = subscriptions
        self.now = now
        self.faults = FaultPlan(seed: seed)
    }

    /// The anchor actually used: explicit, else the frozen now, else the current time.
    public var effectiveAnchor: Int64 { anchor ?? now ?? SimClock.real.now() }
}
