import AppStoreSimulator
import Foundation
import TestSupport

/// An in-process simulator for the App Store Connect report tests: a world anchored on 2026-11-21 whose clock reads
/// 2026-12-01 12:00 UTC (every November day's Subscriber report and fiscal October's Financial reports are out,
/// fiscal November's are not), Apple's hourly request budget (`hourlyLimit`), customers only its reports know
/// (`lostOrders`), and the team key written where a command can read it.
struct ReportSimulator {
    let server: SimulatorServer
    /// `team-key.p8`, the App Store Connect team key, in the fixture's directory.
    let teamKeyFile: String

    var identity: ServerAPIIdentity { server.serverAPI.identity }

    static func start(
        seed: UInt64,
        subscriptions: Int,
        hourlyLimit: Int = 3600,
        lostOrders: Int = 0,
        in directory: URL
    ) throws -> ReportSimulator {
        guard let now = SimTime.parseRFC3339("2026-12-01T12:00:00Z") else { throw FixtureError("bad clock") }
        var config = SimulatorConfiguration(seed: seed, subscriptions: subscriptions, now: now)
        config.anchor = SimTime.parseRFC3339("2026-11-21T03:00:00Z")
        config.threads = 1
        config.reportsHourlyLimit = hourlyLimit
        config.lostOrders = lostOrders
        let server = try SimulatorServer.start(configuration: config)
        let key = directory.appendingPathComponent("team-key.p8").path
        try Data(server.serverAPI.identity.teamKey.pemRepresentation.utf8).write(to: URL(fileURLWithPath: key))
        return ReportSimulator(server: server, teamKeyFile: key)
    }
}
