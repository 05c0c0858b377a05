import AppStoreClient
import CurlHTTP
import Foundation
import Logging
import Postgres

/// The run's parts that talk to Apple: the HTTP client, the store, and the Apple source of every app
/// (docs/architecture.md, "Several apps").
extension ReconciliationRunner {
    /// The HTTP client a run asks Apple with: one connection per request in flight, the run's CA file.
    static func httpClient(parameters: RunParameters, request: Request) -> CurlHTTPClient {
        CurlHTTPClient(
            configuration: CurlHTTPClient.Configuration(
                maxConnections: max(8, parameters.options.concurrency),
                maxHostConnections: max(8, parameters.options.concurrency),
                caFile: request.caFile
            )
        )
    }

    /// The run's store, set up as its parameters say: the ledger read with the items when any app uses the App
    /// Store Server API, the rejected schedule, and a backfill writing every ledger again.
    static func store(
        runId: Int64,
        parameters: RunParameters,
        asOf: Date,
        request: Request,
        connection: PostgresConnection,
        readConnection: PostgresConnection
    ) -> RunStore {
        let store = RunStore(
            connection: connection,
            readConnection: readConnection,
            runId: runId,
            dryRun: parameters.options.dryRun,
            verifiedAt: parameters.fixedClock ? asOf : Date()
        )
        store.loadsLedger = request.apps.contains { $0.source == .serverAPI }
        store.rejectedRecheck = parameters.selection.rejectedRecheck
        if case .backfill = parameters.selection { store.writesUnchangedLedgers = true }
        return store
    }

    /// The settings whose notification history the run reads first: each App Store Server API app's key, and the
    /// key configured beside the one verifyReceipt app's shared secret.
    static func notificationSources(_ request: Request) -> [ServerAPISettings] {
        request.apps.compactMap(\.notificationSettings)
    }

    /// The run's Apple source: every app behind one router (docs/architecture.md, "Several apps"), each capped by
    /// the run's `--rate`; rows of a bundle id no app names end `no_app`, and with one app, rows without a bundle id
    /// are its. A resumed run asks Apple the way it started: the same apps file, or the same source.
    func makeRouter(
        request: Request,
        parameters: RunParameters,
        http: CurlHTTPClient,
        logger: Logger,
        now: @escaping @Sendable () -> Date
    ) throws -> any AppleSource {
        try Self.checkSameApps(request, parameters)
        var sources: [String: any AppleSource] = [:]
        for app in request.apps {
            sources[app.bundleId] = try makeSource(
                app,
                label: request.apps.count > 1 ? app.bundleId : nil,
                rate: min(app.rate ?? parameters.options.rate, parameters.options.rate),
                options: parameters.options,
                http: http,
                logger: logger,
                now: now
            )
        }
        return AppRouterSource(sources: sources, defaultApp: request.apps.count == 1 ? request.apps[0].bundleId : nil)
    }

    /// Exit 78 when the apps given are not those the run was started with (a resumed run): an apps file for a run of
    /// several apps, the same source for a one-app run.
    static func checkSameApps(_ request: Request, _ parameters: RunParameters) throws {
        if let stored = parameters.apps, request.appsFile == nil {
            throw ConfigurationError(
                "this run reconciles several apps (\(stored.keys.sorted().joined(separator: ", "))): "
                    + "give the same --apps FILE to resume it"
            )
        }
        let started = parameters.source ?? .verifyReceipt
        if parameters.apps == nil, request.appsFile == nil, started != .auto, started != request.source {
            throw ConfigurationError(
                "this run was started with --source \(started.rawValue): resume it the same way "
                    + "(--source \(started.rawValue), with its settings)"
            )
        }
    }

    /// One app's Apple source, asking with the app's credentials; `label` names the app's rate budgets in a run of
    /// several apps.
    private func makeSource(
        _ app: AppDefinition,
        label: String?,
        rate: Double,
        options: RunOptions,
        http: CurlHTTPClient,
        logger: Logger,
        now: @escaping @Sendable () -> Date
    ) throws -> any AppleSource {
        switch app.credentials {
        case .serverAPI(let settings):
            var endpoints = settings.endpoints
            endpoints.connectTimeout = .milliseconds(SecondsConversion.milliseconds(options.connectTimeoutSeconds))
            endpoints.requestTimeout = .milliseconds(SecondsConversion.milliseconds(options.requestTimeoutSeconds))
            var budgets = settings.budgets.capped(at: rate)
            budgets.app = label
            return ServerAPISource(
                client: ServerAPIClient(http: http, endpoints: endpoints, signer: try settings.api.signer()),
                budgets: budgets,
                roots: settings.roots,
                bundleId: settings.api.bundleId,
                appAppleId: settings.appAppleId,
                maxAttempts: options.maxAttempts,
                logger: logger,
                now: now
            )
        case .verifyReceipt(let apple, _):
            let endpoints = VerifyReceiptEndpoints(
                production: apple.productionURL,
                sandbox: apple.sandboxURL,
                password: apple.sharedSecret.value,
                excludeOldTransactions: options.excludeOldTransactions,
                connectTimeout: .milliseconds(SecondsConversion.milliseconds(options.connectTimeoutSeconds)),
                requestTimeout: .milliseconds(SecondsConversion.milliseconds(options.requestTimeoutSeconds))
            )
            return VerifyReceiptSource(
                client: VerifyReceiptClient(http: http, endpoints: endpoints),
                rate: rate,
                maxAttempts: options.maxAttempts,
                bundleId: app.bundleId,
                app: label,
                logger: logger,
                now: now
            )
        }
    }
}
