import AppStoreClient
import ArgumentParser
import CurlHTTP
import Foundation
import Logging
import Postgres
import ReceiptDomain
import Reconciler

/// `renewal-reconciler customer`: one customer's whole story for support (docs/customer.md), read-only.
struct CustomerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "customer",
        abstract: "One customer's whole story for support: subscriptions, transactions, notifications, runs, events.",
        discussion: """
            Give exactly one of --user-id, --original-transaction-id (any transaction id of the subscription \
            works), --app-account-token or --order-id (the order id on the customer's App Store receipt: asked \
            of Apple with Look Up Order ID, which needs the App Store Server API settings `run` uses: \
            APPLE_PRIVATE_KEY_FILE, APPLE_KEY_ID, APPLE_ISSUER_ID, APPLE_BUNDLE_ID, APPLE_APP_APPLE_ID, or --apps). \
            Prints every subscription of the customer (the row as stored, its last check), every transaction \
            with price and refunds, the notifications naming it, what each run recorded and its events, as text \
            or --json. Nothing is written to the subscriptions (--refresh records a dry run). Receipts and signed payloads are never printed (their lengths are).

            Exit 0 found; 1 no such customer, or an order Apple does not know (or whose signature does not \
            verify); 64 bad arguments; 69 Apple unavailable; 75 --refresh while another run holds the lock; 78 \
            configuration (401 included). See docs/customer.md.
            """
    )

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var logging: LoggingOptions
    @OptionGroup var pipeline: PipelineOptions

    @Option(help: "The app's user id.")
    var userId: String?

    @Option(help: "The original transaction id of one of the customer's subscriptions (or any of its transaction ids).")
    var originalTransactionId: String?

    @Option(help: "The app account token the app gave StoreKit at purchase (a UUID).")
    var appAccountToken: String?

    @Option(help: "The order id on the customer's App Store receipt (asks Apple: Look Up Order ID).")
    var orderId: String?

    @Flag(help: "Print JSON instead of text.")
    var json = false

    @Flag(
        help: """
            Also ask Apple now about each of the customer's subscriptions (a dry-run backfill within the rate \
            budget: the run's own decision) and show what would change; nothing is written to the subscriptions.
            """
    )
    var refresh = false

    func validate() throws {
        let given = [userId, originalTransactionId, appAccountToken, orderId].compactMap { $0 }
        guard given.count == 1 else {
            throw ValidationError(
                "give exactly one of --user-id, --original-transaction-id, --app-account-token, --order-id"
            )
        }
        guard let value = given.first, !value.trimmingCharacters(in: .whitespaces).isEmpty, value.count <= 200 else {
            throw ValidationError("the id must not be empty nor longer than 200 characters")
        }
    }

    var query: CustomerQuery {
        if let userId { return .userId(userId) }
        if let originalTransactionId { return .originalTransactionId(originalTransactionId) }
        if let appAccountToken { return .appAccountToken(appAccountToken) }
        return .orderId(orderId ?? "")
    }

    func run() throws {
        logging.bootstrap()
        try runReportingErrors {
            let connection = try database.migratedConnection()
            defer { connection.close() }
            let story = try CustomerStory.read(
                query,
                from: CustomerLookup(connection: connection),
                orderTransactions: lookUpOrder
            )
            let refreshed = refresh ? try askAppleNow(story, connection) : nil
            if json {
                var object = story.json
                if case .object(let members) = object, let refreshed {
                    object = .object(members + [("refresh", .array(refreshed.map(\.json)))])
                }
                print(object.text(pretty: true), terminator: "")
            } else {
                print(CustomerStoryText.render(story), terminator: "")
                if let refreshed { print(CustomerStoryText.refreshLines(refreshed).joined(separator: "\n")) }
            }
        }
    }

    /// Asks each configured App Store Server API app (one, or those of --apps) until one knows the order.
    /// `--refresh`: a dry-run backfill of the customer's subscriptions (the run path and its decision, Apple's rate
    /// limits; nothing written to `subscriptions`), then what each item found against the stored row.
    func askAppleNow(_ story: CustomerStory, _ connection: PostgresConnection) throws -> [CustomerRecord] {
        let ids = story.subscriptions.map(\.originalTransactionId)
        guard !ids.isEmpty else { return [] }
        var options = pipeline.runOptions()
        options.dryRun = true
        let apps = try pipeline.runApps()
        var request = ReconciliationRunner.Request(
            mode: .backfill,
            selection: .backfill(BackfillFilter(originalTransactionIds: ids)),
            options: options,
            apps: apps.apps
        )
        request.appsFile = apps.file
        request.now = pipeline.asOf
        request.caFile = try HTTPSCAFileConfiguration.load(flag: pipeline.caFile)
        request.progressStyle = .quiet
        let summary = try ReconciliationRunner(
            connectionString: try database.connectionString(),
            logger: Logger(label: "renewal-reconciler")
        ).run(request)
        return try CustomerLookup(connection: connection).refreshed(runId: summary.runId)
    }

    func lookUpOrder(_ orderId: String) throws -> [ReceiptTransaction] {
        let keyed = pipeline.apps != nil || ServerAPISettings.keyConfigured(privateKeyFile: pipeline.privateKeyFile)
        let settings = keyed ? try pipeline.runApps().apps.compactMap(\.credentials.notificationSettings) : []
        guard !settings.isEmpty else {
            throw ConfigurationError(
                "--order-id needs the App Store Server API: set APPLE_PRIVATE_KEY_FILE, APPLE_KEY_ID, "
                    + "APPLE_ISSUER_ID and APPLE_APP_APPLE_ID (docs/server-api.md)"
            )
        }
        let http = CurlHTTPClient(
            configuration: CurlHTTPClient.Configuration(
                caFile: try HTTPSCAFileConfiguration.load(flag: pipeline.caFile)
            )
        )
        defer { http.shutdown() }
        var unknown: CustomerLookupError?
        for app in settings {
            var endpoints = app.endpoints
            endpoints.connectTimeout = .milliseconds(Int64(pipeline.connectTimeout * 1000))
            endpoints.requestTimeout = .milliseconds(Int64(pipeline.requestTimeout * 1000))
            let client = ServerAPIClient(http: http, endpoints: endpoints, signer: try app.api.signer())
            let lookup = OrderLookup(client: client, settings: app)
            let answer = Result { () throws(CustomerLookupError) in try lookup.transactions(orderId: orderId) }
            switch answer {
            case .success(let transactions): return transactions
            case .failure(let error) where error.kind == .unknownOrder: unknown = error
            case .failure(let error): throw error
            }
        }
        throw unknown ?? CustomerLookupError(.unknownOrder, "Apple knows no order \(orderId)")
    }
}
