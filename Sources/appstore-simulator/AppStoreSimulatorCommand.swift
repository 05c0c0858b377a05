import AppStoreSimulator
import ArgumentParser
import Foundation

/// `appstore-simulator`: a local stand-in for Apple's verifyReceipt, with a deterministic population.
@main
struct AppStoreSimulatorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "appstore-simulator",
        abstract: "A local App Store verifyReceipt simulator with a deterministic subscription population.",
        subcommands: [Serve.self, Export.self, Token.self]
    )
}

/// Options that pick the population (shared by serve and export).
struct PopulationOptions: ParsableArguments {
    @Option(help: "Seed of the population and of fault decisions.")
    var seed: UInt64 = 1

    @Option(help: "Number of subscriptions (original_transaction_ids) in the population.")
    var subscriptions: Int = 1000

    @Option(
        help:
            "Instant the scenarios are built around (RFC 3339). Default: --now, else the start time. Pass the same anchor on later nights to keep the same world."
    )
    var anchor: String?

    @Option(name: .customLong("bundle-id"), help: "Bundle id of the population's app.")
    var bundleId: String = "com.example.renewals"

    @Option(
        name: .customLong("signature-faulty-subscriptions"),
        help: """
            Share (0..1) of subscriptions whose every Server API answer is signed with a fault; export lists \
            them in server-api/signature-faults.jsonl.
            """
    )
    var faultySubscriptions: Double = 0

    @Option(
        name: .customLong("lost-orders"),
        help: """
            Also this many customers whose purchases never reached the app's database: in the App Store Connect \
            reports only; export lists them in server-api/lost-orders.jsonl.
            """
    )
    var lostOrders: Int = 0

    @Option(
        help: """
            The world: scenarios (every case the reconciler must get right, in test proportions) or retail (a \
            month like a real app's: renewals on every day, churn, refunds and billing failures at a few percent).
            """
    )
    var mix: PopulationMix = .scenarios

    func validateCommon() throws {
        guard subscriptions >= 0 else { throw ValidationError("--subscriptions must be >= 0") }
        guard lostOrders >= 0 else { throw ValidationError("--lost-orders must be >= 0") }
        guard (0...1).contains(faultySubscriptions) else {
            throw ValidationError("--signature-faulty-subscriptions must be within 0...1")
        }
        if let anchor, SimTimeParse.parse(anchor) == nil {
            throw ValidationError("--anchor is not RFC 3339: \(anchor)")
        }
    }
}

enum SimTimeParse {
    static func parse(_ text: String) -> Int64? { SimTime.parseRFC3339(text) }
}

struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve verifyReceipt and the App Store Server API (production at the root, sandbox under /sandbox).",
        discussion: """
            The shared secret comes from $APPSTORE_SIM_SHARED_SECRET or --shared-secret-file, else it is \
            "\(SimulatorConfiguration.defaultSharedSecret)". A request with another password is answered 21004 \
            once its receipt authenticates and is in the right environment (21007/21008 and the per-account \
            answers 21003/21010 come first); --fault-21004-all answers 21004 to every well-formed request, \
            for testing that a client stops when 21004s are systematic. The Server API (/inApps/...) needs a \
            JWT signed with the key `export` writes to DIR/server-api/key.p8. GET /_stats returns counters, \
            GET /_health 200.
            """
    )

    @OptionGroup var population: PopulationOptions

    @Option(help: "Address to listen on.")
    var host: String = "127.0.0.1"

    @Option(help: "Port (0 picks a free one; the chosen port is printed on the first stdout line).")
    var port: Int = 0

    @Option(name: .customLong("port-file"), help: "Also write the chosen port to this file.")
    var portFile: String?

    @Option(help: "Freeze the simulator's clock at this RFC 3339 instant (default: real time).")
    var now: String?

    @Option(name: .customLong("shared-secret-file"), help: "File holding the app's shared secret.")
    var sharedSecretFile: String?

    @Option(help: "Event loop threads.")
    var threads: Int = ProcessInfo.processInfo.activeProcessorCount

    @Option(name: .customLong("latency-ms"), help: "Added latency: 50, uniform:10-100 or normal:50,10.")
    var latency: String?

    @Option(name: .customLong("fault-http500"), help: "Rate (0..1) of HTTP 500 answers.")
    var http500: Double?
    @Option(name: .customLong("fault-http503"), help: "Rate of HTTP 503 answers.")
    var http503: Double?
    @Option(name: .customLong("fault-429"), help: "Rate of HTTP 429 answers with Retry-After.")
    var http429: Double?
    @Option(name: .customLong("retry-after"), help: "Seconds in Retry-After for 429.")
    var retryAfter: Int = 1
    @Option(name: .customLong("fault-reset"), help: "Rate of connection resets (RST) before answering.")
    var reset: Double?
    @Option(name: .customLong("fault-hang"), help: "Rate of requests held without answer for --hang-ms, then closed.")
    var hang: Double?
    @Option(name: .customLong("hang-ms"), help: "How long a hung request is held.")
    var hangMs: Int64 = 60_000
    @Option(name: .customLong("fault-21005"), help: "Rate of status 21005 answers.")
    var status21005: Double?
    @Option(name: .customLong("fault-21002"), help: "Rate of transient status 21002 answers.")
    var status21002: Double?
    @Option(name: .customLong("fault-211xx"), help: "Rate of status 21100-21199 answers (is_retryable mix).")
    var status211xx: Double?
    @Option(name: .customLong("fault-malformed-json"), help: "Rate of HTTP 200 answers that are not JSON.")
    var malformedJSON: Double?
    @Option(name: .customLong("fault-truncated"), help: "Rate of answers cut short of their Content-Length.")
    var truncated: Double?
    @Option(name: .customLong("faults-all"), help: "Set every fault kind not given explicitly to this rate.")
    var faultsAll: Double?
    @Flag(
        name: .customLong("fault-21004-all"),
        help: "Answer status 21004 (shared secret mismatch) to every well-formed request (not part of --faults-all)."
    )
    var secretMismatchForAll = false

    @Option(
        name: .customLong("fault-foreign-chain"),
        help: "Server API: rate of answers signed by a look-alike chain under another root (not in --faults-all)."
    )
    var foreignChain: Double?
    @Option(
        name: .customLong("fault-leaf-without-oid"),
        help: "Server API: rate of answers signed by a leaf without Apple's OID (not in --faults-all)."
    )
    var leafWithoutOID: Double?
    @Option(
        name: .customLong("fault-expired-leaf"),
        help: "Server API: rate of answers signed by a leaf expired at signedDate (not in --faults-all)."
    )
    var expiredLeaf: Double?
    @Option(
        name: .customLong("fault-tampered-payload"),
        help: "Server API: rate of answers whose payload was changed after signing (not in --faults-all)."
    )
    var tamperedPayload: Double?

    func signatureRates() -> [SignatureFault: Double] {
        let given: [(SignatureFault, Double?)] = [
            (.foreignChain, foreignChain), (.leafWithoutOID, leafWithoutOID), (.expiredLeaf, expiredLeaf),
            (.tamperedPayload, tamperedPayload),
        ]
        return Dictionary(uniqueKeysWithValues: given.compactMap { kind, rate in rate.map { (kind, $0) } })
    }

    @Option(name: .customLong("max-rps"), help: "Answer 429 to requests over this many in any one-second window.")
    var maxRPS: Int?

    @Option(
        name: .customLong("max-rps-statuses"),
        help: "Server API: Get All Subscription Statuses per second in production (sandbox 10%; 0 = no limit)."
    )
    var maxRPSStatuses: Int = 50
    @Option(name: .customLong("max-rps-history"), help: "Server API: Get Transaction History per second (production).")
    var maxRPSHistory: Int = 50
    @Option(
        name: .customLong("max-rps-transaction-info"),
        help: "Server API: Get Transaction Info per second (production)."
    )
    var maxRPSTransactionInfo: Int = 50
    @Option(
        name: .customLong("max-rps-notification-history"),
        help: "Server API: Get Notification History per second (production)."
    )
    var maxRPSNotificationHistory: Int = 50
    @Option(
        name: .customLong("max-rps-refund-history"),
        help: "Server API: Get Refund History per second (production)."
    )
    var maxRPSRefundHistory: Int = 10
    @Option(
        name: .customLong("max-rps-order-lookup"),
        help: "Server API: Look Up Order ID per second (production)."
    )
    var maxRPSOrderLookup: Int = 10
    @Option(
        name: .customLong("reports-hourly-limit"),
        help: "App Store Connect report downloads per rolling hour before 429 RATE_LIMIT_EXCEEDED (Apple: 3600)."
    )
    var reportsHourlyLimit: Int = 3600

    func serverAPILimits() -> ServerAPILimits {
        let given: [(ServerAPIService.Endpoint, Int)] = [
            (.subscriptions, maxRPSStatuses), (.history, maxRPSHistory), (.transactions, maxRPSTransactionInfo),
            (.notificationHistory, maxRPSNotificationHistory), (.refundHistory, maxRPSRefundHistory),
            (.orderLookup, maxRPSOrderLookup),
        ]
        return ServerAPILimits(production: Dictionary(uniqueKeysWithValues: given.filter { $0.1 > 0 }))
    }

    func validate() throws {
        try population.validateCommon()
        guard
            [
                maxRPSStatuses, maxRPSHistory, maxRPSTransactionInfo, maxRPSNotificationHistory, maxRPSRefundHistory,
                maxRPSOrderLookup,
            ]
            .allSatisfy({ $0 >= 0 })
        else { throw ValidationError("--max-rps-* must be >= 0 (0: no limit)") }
        if let now, SimTime.parseRFC3339(now) == nil { throw ValidationError("--now is not RFC 3339: \(now)") }
        if let latency, LatencyDistribution(parsing: latency) == nil {
            throw ValidationError("--latency-ms must be N, uniform:A-B or normal:MEAN,SD (got \(latency))")
        }
        for (name, rate) in rates() where !(0...1).contains(rate) {
            throw ValidationError("fault rate \(name) must be within 0...1 (got \(rate))")
        }
        for (name, rate) in signatureRates() where !(0...1).contains(rate) {
            throw ValidationError("fault rate \(name.rawValue) must be within 0...1 (got \(rate))")
        }
        if let maxRPS, maxRPS < 1 { throw ValidationError("--max-rps must be >= 1") }
        guard reportsHourlyLimit >= 1 else { throw ValidationError("--reports-hourly-limit must be >= 1") }
        guard threads >= 1, hangMs >= 0, retryAfter >= 0 else {
            throw ValidationError("--threads must be >= 1; --hang-ms and --retry-after >= 0")
        }
    }

    func rates() -> [(FaultKind, Double)] {
        let explicit: [(FaultKind, Double?)] = [
            (.http500, http500), (.http503, http503), (.http429, http429), (.reset, reset), (.hang, hang),
            (.status21005, status21005), (.status21002, status21002), (.status211xx, status211xx),
            (.malformedJSON, malformedJSON), (.truncated, truncated),
        ]
        return explicit.compactMap { kind, rate in (rate ?? faultsAll).map { (kind, $0) } }
    }

    func sharedSecret() throws -> String {
        if let path = sharedSecretFile {
            guard let data = FileManager.default.contents(atPath: path),
                let text = String(data: data, encoding: .utf8)
            else { throw ValidationError("cannot read --shared-secret-file \(path)") }
            return text.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        if let env = ProcessInfo.processInfo.environment["APPSTORE_SIM_SHARED_SECRET"], !env.isEmpty { return env }
        return SimulatorConfiguration.defaultSharedSecret
    }

    func run() throws {
        // A parent (test runner, CI shell) may have spawned us with signals blocked or ignored:
        // restore the defaults so SIGTERM/SIGINT stop the server.
        var all = sigset_t()
        sigfillset(&all)
        sigprocmask(SIG_UNBLOCK, &all, nil)
        signal(SIGTERM, SIG_DFL)
        signal(SIGINT, SIG_DFL)
        var config = SimulatorConfiguration(
            seed: population.seed,
            subscriptions: population.subscriptions,
            now: now.flatMap(SimTime.parseRFC3339)
        )
        config.host = host
        config.port = port
        config.anchor = population.anchor.flatMap(SimTime.parseRFC3339)
        config.bundleId = population.bundleId
        config.lostOrders = population.lostOrders
        config.mix = population.mix
        config.sharedSecret = try sharedSecret()
        config.threads = threads
        config.maxRequestsPerSecond = maxRPS
        config.serverAPILimits = serverAPILimits()
        config.reportsHourlyLimit = reportsHourlyLimit
        config.secretMismatchForAll = secretMismatchForAll
        config.faults = FaultPlan(
            seed: population.seed,
            rates: Dictionary(uniqueKeysWithValues: rates()),
            latency: latency.flatMap(LatencyDistribution.init(parsing:)) ?? .none,
            retryAfterSeconds: retryAfter,
            hangMilliseconds: hangMs
        )
        config.faults.signatureRates = signatureRates()
        config.faults.faultySubscriptionRate = population.faultySubscriptions
        let server = try SimulatorServer.start(configuration: config)
        FileHandle.standardOutput.write(Data("listening on \(server.baseURL)\n".utf8))
        if let portFile {
            do {
                try "\(server.port)\n".write(toFile: portFile, atomically: true, encoding: .utf8)
            } catch {
                throw ValidationError("cannot write --port-file \(portFile): \(error)")
            }
        }
        FileHandle.standardError.write(
            Data(
                "appstore-simulator: seed=\(config.seed) subscriptions=\(server.population.subscriptionCount) anchor=\(SimTime.rfc3339(server.population.anchor)) clock=\(now ?? "real")\n"
                    .utf8
            )
        )
        try server.waitUntilClosed()
    }
}

struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: """
            Write DIR/purchases.jsonl (what the app stored), DIR/truth.jsonl (what Apple implies at --now), \
            DIR/catalog.csv and DIR/server-api/ (root.pem, key.p8, api.json: what a Server API client needs; \
            ledger.jsonl, one-time-charges.jsonl, revenue.json and notifications-truth.json: the money and \
            notifications Apple implies).
            """
    )

    @OptionGroup var population: PopulationOptions

    @Option(help: "The instant T the truth is computed for (RFC 3339).")
    var now: String

    @Option(help: "Output directory.")
    var out: String

    @Option(
        name: .customLong("trend-nights"),
        help: ArgumentHelp(
            "Also write DIR/\(TrendTruthExporter.fileName): what Apple implies on N nights, --now then one day later each.",
            valueName: "n"
        )
    )
    var trendNights: Int?

    @Option(
        name: .customLong("sales-truth-days"),
        help: ArgumentHelp(
            """
            Also write DIR/server-api/\(SalesTruthExporter.fileName): every event of Apple's reports in the N days \
            before --now with its tax, commission tier, settlement day and lost-order flag, and the family copies \
            Apple never reports.
            """,
            valueName: "n"
        )
    )
    var salesTruthDays: Int?

    func validate() throws {
        try population.validateCommon()
        if SimTime.parseRFC3339(now) == nil { throw ValidationError("--now is not RFC 3339: \(now)") }
        if let salesTruthDays, !(1...400).contains(salesTruthDays) {
            throw ValidationError("--sales-truth-days must be within 1...400 (got \(salesTruthDays))")
        }
        if let trendNights, !(1...366).contains(trendNights) {
            throw ValidationError("--trend-nights must be within 1...366 (got \(trendNights))")
        }
    }

    func run() throws {
        guard let t = SimTime.parseRFC3339(now) else { throw ValidationError("--now is not RFC 3339: \(now)") }
        let anchor = population.anchor.flatMap(SimTime.parseRFC3339) ?? t
        let pop = Population(
            seed: population.seed,
            subscriptions: population.subscriptions,
            anchor: anchor,
            bundleId: population.bundleId,
            lostOrders: population.lostOrders,
            mix: population.mix
        )
        let summary = try PopulationExporter(population: pop).export(
            to: out,
            now: t,
            faultySubscriptionRate: population.faultySubscriptions
        )
        if let trendNights {
            try TrendTruthExporter(population: pop).export(
                to: out + "/" + TrendTruthExporter.fileName,
                from: t,
                nights: trendNights
            )
        }
        if let salesTruthDays {
            try SalesTruthExporter(population: pop).export(
                to: out + "/server-api/" + SalesTruthExporter.fileName,
                from: t - Int64(salesTruthDays) * SimTime.day,
                until: t,
                asOf: t
            )
        }
        FileHandle.standardError.write(Data("appstore-simulator export: \(summary)\n".utf8))
    }
}

/// `appstore-simulator token`: an API token for the population's key, for curl and wrk.
struct Token: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: """
            Print a Server API token (JWT) signed with the population's In-App Purchase key, or with \
            --app-store-connect an App Store Connect API token of its team key (for curl, wrk).
            """
    )

    @OptionGroup var population: PopulationOptions

    @Option(help: "Seconds the token is valid (Apple allows at most 3600, 1200 with --app-store-connect).")
    var lifetime: Int64?

    @Flag(
        name: .customLong("app-store-connect"),
        help: "A token of the team key for the App Store Connect API's report downloads (no bid)."
    )
    var appStoreConnect = false

    func validate() throws {
        try population.validateCommon()
        guard (lifetime ?? 1) > 0 else { throw ValidationError("--lifetime must be > 0") }
    }

    func run() throws {
        // Keys and ids depend on the seed and bundle id only; the anchor only moves certificate validity.
        let identity = ServerAPIIdentity(seed: population.seed, anchor: 0, bundleId: population.bundleId)
        let now = Int64(Date().timeIntervalSince1970)
        let scope: APITokenAuthenticator.Scope = appStoreConnect ? .appStoreConnect : .serverAPI
        print(identity.token(issuedAt: now, lifetimeSeconds: lifetime ?? (appStoreConnect ? 1200 : 3600), scope: scope))
    }
}

extension PopulationMix: ExpressibleByArgument {}
