import NIOCore
import NIOHTTP1
import NIOPosix

/// A running App Store simulator: a SwiftNIO HTTP/1.1 server on loopback answering verifyReceipt
/// for production (`POST /verifyReceipt`) and sandbox (`POST /sandbox/verifyReceipt`).
///
/// Start it in-process from tests with port 0 and read `port`; call `shutdown()` when done.
public final class SimulatorServer: Sendable {
    public let configuration: SimulatorConfiguration
    public let population: Population
    public let service: VerifyService
    public let serverAPI: ServerAPIService
    public let stats: SimulatorStats
    public let host: String
    /// The port actually bound (the chosen one when configured with 0).
    public let port: Int
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel

    /// Base URL, e.g. `http://127.0.0.1:PORT`; production is `baseURL + "/verifyReceipt"`.
    public var baseURL: String { "http://\(host):\(port)" }
    public var productionURL: String { baseURL + "/verifyReceipt" }
    public var sandboxURL: String { baseURL + "/sandbox/verifyReceipt" }

    /// Builds the population and binds. `population` may be passed to share one already built.
    public static func start(
        configuration: SimulatorConfiguration,
        population: Population? = nil
    ) throws -> SimulatorServer {
        let pop =
            population
            ?? Population(
                seed: configuration.seed,
                subscriptions: configuration.subscriptions,
                anchor: configuration.effectiveAnchor,
                bundleId: configuration.bundleId,
                lostOrders: configuration.lostOrders,
                mix: configuration.mix
            )
        let clock: SimClock = configuration.now.map { .frozen($0) } ?? .real
        let service = VerifyService(
            population: pop,
            sharedSecret: configuration.sharedSecret,
            clock: clock,
            secretMismatchForAll: configuration.secretMismatchForAll
        )
        let identity = ServerAPIIdentity(seed: configuration.seed, anchor: pop.anchor, bundleId: pop.bundleId)
        let serverAPI = ServerAPIService(
            population: pop,
            identity: identity,
            clock: clock,
            faultySubscriptionRate: configuration.faults.faultySubscriptionRate
        )
        let reports = ReportsService(population: pop, identity: identity, clock: clock)
        let stats = SimulatorStats(maxRequestsPerSecond: configuration.maxRequestsPerSecond)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, configuration.threads))
        let faults = configuration.faults
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 1024)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelOption(.maxMessagesPerRead, value: 16)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(
                        SimulatorHTTPHandler(
                            service: service,
                            serverAPI: serverAPI,
                            stats: stats,
                            faults: faults,
                            limits: configuration.serverAPILimits,
                            reports: reports,
                            reportsHourlyLimit: configuration.reportsHourlyLimit
                        )
                    )
                }
            }
        let channel: any Channel
        do {
            channel = try bootstrap.bind(host: configuration.host, port: configuration.port).wait()
        } catch {
            try? group.syncShutdownGracefully()
            throw error
        }
        let port = channel.localAddress?.port ?? configuration.port
        return SimulatorServer(
            configuration: configuration,
            population: pop,
            service: service,
            serverAPI: serverAPI,
            stats: stats,
            host: configuration.host,
            port: port,
            group: group,
            channel: channel
        )
    }

    private init(
        configuration: SimulatorConfiguration,
        population: Population,
        service: VerifyService,
        serverAPI: ServerAPIService,
        stats: SimulatorStats,
        host: String,
        port: Int,
        group: MultiThreadedEventLoopGroup,
        channel: any Channel
    ) {
        self.configuration = configuration
        self.population = population
        self.service = service
        self.serverAPI = serverAPI
        self.stats = stats
        self.host = host
        self.port = port
        self.group = group
        self.channel = channel
    }

    /// Blocks until the listening channel closes (used by the CLI).
    public func waitUntilClosed() throws {
        try channel.closeFuture.wait()
    }

    /// Stops listening and shuts the event loops down.
    public func shutdown() throws {
        try? channel.close().wait()
        try group.syncShutdownGracefully()
    }
}
