/// How a worker of a shared run keeps in touch (docs/architecture.md, "Workers"): `run --worker
/// [--heartbeat 5s] [--lease-timeout 30s] [--join-window 12h]`.
public struct WorkerSettings: Sendable, Equatable {
    /// How often the worker renews its registration and leases and re-reads its share of the rate limits.
    public var heartbeatSeconds: Double
    /// How long a claimed item stays a worker's without a heartbeat; a worker whose heartbeat is older is dead:
    /// its items go to the others and its share of the rate limits is divided among them.
    public var leaseSeconds: Double
    /// A worker that finds no running worker run starts one only if no completed worker run's as-of instant (its
    /// start, or its `--now`) lies within this long of its own: a host whose timer fired late (or that booted after
    /// the night's run) has nothing to do. 0: always start one.
    public var joinWindowSeconds: Double

    public init(heartbeatSeconds: Double = 5, leaseSeconds: Double = 30, joinWindowSeconds: Double = 12 * 3600) {
        self.heartbeatSeconds = heartbeatSeconds
        self.leaseSeconds = leaseSeconds
        self.joinWindowSeconds = joinWindowSeconds
    }
}
