import AppStoreClient
import CurlHTTP
import Foundation
import Logging
import Postgres

extension ReconciliationRunner {
    /// Reads notification history before the scan (docs/architecture.md, "Notification history"); returns why it
    /// failed when Apple kept failing (the run then ends partial), nil when it worked or there is none to read.
    func pullNotifications(
        _ request: Request,
        parameters: RunParameters,
        runId: Int64,
        asOf: Date,
        connection work: PostgresConnection,
        logger runLogger: Logger
    ) throws -> String? {
        var notificationFailure: String?
        for settings in Self.notificationSources(request) {
            let notificationsHTTP = CurlHTTPClient(
                configuration: CurlHTTPClient.Configuration(caFile: request.caFile)
            )
            defer { notificationsHTTP.shutdown() }
            var endpoints = settings.endpoints
            endpoints.connectTimeout = .milliseconds(
                SecondsConversion.milliseconds(parameters.options.connectTimeoutSeconds)
            )
            endpoints.requestTimeout = .milliseconds(
                SecondsConversion.milliseconds(parameters.options.requestTimeoutSeconds)
            )
            let notifications = try NotificationHistoryReader(
                connection: work,
                client: ServerAPIClient(
                    http: notificationsHTTP,
                    endpoints: endpoints,
                    signer: try settings.api.signer()
                ),
                settings: settings,
                logger: runLogger,
                rateCap: parameters.options.rate,
                policy: AttemptPolicy(parameters.options)
            )
            do {
                let pulled = try notifications.pull(
                    runId: runId,
                    asOf: asOf,
                    lookback: request.notificationsLookback,
                    dryRun: parameters.options.dryRun
                )
                runLogger.info("run \(runId): \(pulled.line)")
            } catch let error as NotificationHistoryError {
                // Apple kept failing: the night's window is still worth reconciling. The cursor stays, so
                // the next run reads the same notifications again; this run ends partial (exit 2).
                runLogger.error("run \(runId): \(error); reconciling the due window without it")
                notificationFailure = [notificationFailure, error.description].compactMap { $0 }
                    .joined(separator: "; ")
            }
        }
        return notificationFailure
    }
}
