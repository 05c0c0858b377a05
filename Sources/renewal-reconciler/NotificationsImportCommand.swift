import ArgumentParser
import Foundation
import Reconciler

/// `notifications import --file F`: one signed notification payload a line, verified, stored once each;
/// the next run makes the subscriptions they name due.
struct NotificationsImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Store signed notification payloads an app's webhook received (one signedPayload a line).",
        discussion: """
            Each line is a compact JWS (the signedPayload Apple posted) or a JSON object {"signedPayload": "..."}; \
            blank lines are skipped. Every payload and the signed transaction in it are verified (trusted roots, \
            bundle id, and for production the App Apple ID, as `run` does) and stored once (notificationUUID is \
            the key; one already stored is counted, not stored again). The next run makes the subscriptions they \
            name due whatever their expiry; a notification for a subscription the table does not have is listed \
            in that run's report, never inserted. A line that does not verify is named with its line number and \
            reason (never its content) and not stored; the valid lines are stored and the exit status is 64.
            """
    )

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var logging: LoggingOptions

    @Option(name: .long, help: ArgumentHelp("The file to read (`-` for standard input).", valueName: "path"))
    var file: String

    @Option(help: "The app's bundle id (overrides APPLE_BUNDLE_ID); other apps' notifications are refused.")
    var bundleId: String?

    @Option(help: ArgumentHelp("The app's Apple ID (overrides APPLE_APP_APPLE_ID).", valueName: "number"))
    var appAppleId: String?

    @Option(
        name: .customLong("root-ca"),
        help: ArgumentHelp(
            "Also trust this root (PEM or DER) for signed data; repeatable (adds to APPLE_ROOT_CA_FILE).",
            valueName: "file"
        )
    )
    var rootCA: [String] = []

    @Flag(name: .customLong("root-ca-only"), help: "Trust only the --root-ca / APPLE_ROOT_CA_FILE roots, not Apple's.")
    var rootCAOnly = false

    func run() throws {
        logging.bootstrap()
        try runReportingErrors {
            let environment = ProcessInfo.processInfo.environment
            guard let bundle = bundleId ?? environment["APPLE_BUNDLE_ID"].flatMap({ $0.isEmpty ? nil : $0 }) else {
                throw ConfigurationError("no bundle id: set APPLE_BUNDLE_ID or pass --bundle-id")
            }
            let appAppleIdSetting = appAppleId != nil ? "--app-apple-id" : "APPLE_APP_APPLE_ID"
            guard
                let appAppleIdText = appAppleId ?? environment["APPLE_APP_APPLE_ID"].flatMap({ $0.isEmpty ? nil : $0 })
            else {
                throw ConfigurationError(
                    "no App Apple ID: set APPLE_APP_APPLE_ID or pass --app-apple-id (production notifications are "
                        + "checked against it)"
                )
            }
            guard let appleId = Int64(appAppleIdText), appleId > 0 else {
                throw ConfigurationError("\(appAppleIdSetting): \(appAppleIdText.prefix(40)) is not a positive number")
            }
            let roots = try TrustedRootsConfiguration.load(flagFiles: rootCA, only: rootCAOnly)
            let importer = NotificationImporter(
                connectionString: try database.checkedConnectionString(),
                roots: roots,
                bundleId: bundle,
                appAppleId: appleId
            )
            let result = try importer.importFile(file)
            let shown = result.refused.prefix(100)
            for refusal in shown { FileHandle.standardError.write(Data("\(file): \(refusal)\n".utf8)) }
            if result.refused.count > shown.count {
                FileHandle.standardError.write(
                    Data("\(file): ... and \(result.refused.count - shown.count) more refused lines\n".utf8)
                )
            }
            print(
                "\(file): \(result.lines) notifications read, \(result.stored) stored, \(result.alreadyStored) already "
                    + "stored, \(result.refused.count) refused; \(result.unknownSubscriptions.count) name a subscription "
                    + "the table does not have (the next run reports them)"
            )
            if !result.refused.isEmpty {
                throw UsageError("\(file): \(result.refused.count) line(s) refused (the others were stored)")
            }
        }
    }
}
