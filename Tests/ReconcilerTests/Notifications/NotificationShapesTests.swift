import AppStoreSignedData
import Foundation
import Postgres
import SignedDataTestSupport
import TestSupport
import Testing

@testable import Reconciler

/// Every payload shape Apple documents for App Store Server Notifications V2 through 2026 (`data`, `summary`,
/// `externalPurchaseToken`, `appData`) and a type and shape Apple has not documented yet are stored by
/// `notifications import`; only a signature or claim that does not check out is refused (docs/signed-data.md,
/// section 1). The payloads follow Apple's published examples, signed by a PKI made at test time.
@Suite struct NotificationShapesTests {
    static let pki = try! TestPKI()
    static let appAppleId: Int64 = 1_234_567_890
    static let bundleId = TestPayloads.bundleId

    /// A notification payload of `type` whose body after the common members is `body` (one JSON member or none).
    static func notification(_ type: String, subtype: String? = nil, uuid: String, body: String?) -> String {
        var members = [
            #""notificationType":"\#(type)""#, #""notificationUUID":"\#(uuid)""#, #""version":"2.0""#,
            #""signedDate":\#(TestPayloads.signedDateMs)"#,
        ]
        if let subtype { members.append(#""subtype":"\#(subtype)""#) }
        if let body { members.append(body) }
        return "{" + members.joined(separator: ",") + "}"
    }

    static func data(transaction: String?, extra: [String] = []) -> String {
        var members = [
            #""environment":"Production""#, #""appAppleId":\#(appAppleId)"#, #""bundleId":"\#(bundleId)""#,
            #""bundleVersion":"42""#,
        ]
        if let transaction { members.append(#""signedTransactionInfo":"\#(transaction)""#) }
        return #""data":{"# + (members + extra).joined(separator: ",") + "}"
    }

    /// Imports `payloads` (one notification each) as one file through `NotificationImporter`, as the command does.
    static func importPayloads(_ payloads: [String], into world: StoreWorld) throws -> NotificationImportResult {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "notifications-\(UUID().uuidString).jsonl"
        )
        try Data((payloads.joined(separator: "\n") + "\n").utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        return try NotificationImporter(
            connectionString: world.database.url,
            roots: TrustedRoots([pki.root]),
            bundleId: bundleId,
            appAppleId: appAppleId
        ).importFile(file.path)
    }

    static func appData(bundleId: String = bundleId, signedAppTransaction: String) -> String {
        #""appData":{"appAppleId":\#(appAppleId),"bundleId":"\#(bundleId)","environment":"Production","#
            + #""signedAppTransactionInfo":"\#(signedAppTransaction)"}"#
    }

    static let appTransaction = pki.jws(
        payload: #"{"receiptType":"Production","appAppleId":\#(appAppleId),"bundleId":"\#(bundleId)","#
            + #""applicationVersion":"42","originalPurchaseDate":1700000000000,"appTransactionId":"704289572311234567","#
            + #""signedDate":\#(TestPayloads.signedDateMs)}"#
    )

    /// The lines of the import file: what each is and whether it is stored.
    static func lines() -> [(name: String, payload: String, stored: Bool)] {
        let transaction = pki.jws(payload: TestPayloads.transaction())
        // A consumable (Apple's transaction `type`), as ONE_TIME_CHARGE carries it.
        let oneTime = pki.jws(
            payload: TestPayloads.transaction(
                transactionId: "2000000811119999",
                originalTransactionId: "2000000811119999",
                productId: "com.example.reader.coins100"
            ).replacingOccurrences(of: #""type":"Auto-Renewable Subscription""#, with: #""type":"Consumable""#)
        )
        var tamperedApp = Array(appTransaction)
        let last = tamperedApp.count - 5
        tamperedApp[last] = tamperedApp[last] == "A" ? "B" : "A"
        let cases: [(String, String, Bool)] = [
            (
                "data",
                notification(
                    "DID_RENEW",
                    uuid: "11111111-0000-4000-8000-000000000001",
                    body: data(transaction: transaction)
                ), true
            ),
            (
                "summary",
                notification(
                    "RENEWAL_EXTENSION",
                    subtype: "SUMMARY",
                    uuid: "11111111-0000-4000-8000-000000000002",
                    body: #""summary":{"requestIdentifier":"efb27071-45a4-4aca-9854-2a1e9146f265","#
                        + #""environment":"Production","appAppleId":\#(appAppleId),"bundleId":"\#(bundleId)","#
                        + #""productId":"com.example.reader.monthly","storefrontCountryCodes":["CAN","USA","MEX"],"#
                        + #""succeededCount":5,"failedCount":2}"#
                ),
                true
            ),
            (
                "externalPurchaseToken",
                notification(
                    "EXTERNAL_PURCHASE_TOKEN",
                    subtype: "UNREPORTED",
                    uuid: "11111111-0000-4000-8000-000000000003",
                    body: #""externalPurchaseToken":{"externalPurchaseId":"b2158121-7af9-49d4-9561-1f588205523e","#
                        + #""tokenCreationDate":1698148950000,"appAppleId":\#(appAppleId),"bundleId":"\#(bundleId)"}"#
                ),
                true
            ),
            (
                "appData",
                notification(
                    "RESCIND_CONSENT",
                    uuid: "11111111-0000-4000-8000-000000000004",
                    body: appData(signedAppTransaction: appTransaction)
                ),
                true
            ),
            (
                "data without a transaction",
                notification("TEST", uuid: "11111111-0000-4000-8000-000000000005", body: data(transaction: nil)),
                true
            ),
            (
                "a one-time charge",
                notification(
                    "ONE_TIME_CHARGE",
                    uuid: "11111111-0000-4000-8000-000000000006",
                    body: data(transaction: oneTime)
                ),
                true
            ),
            (
                "a refund request",
                notification(
                    "CONSUMPTION_REQUEST",
                    uuid: "11111111-0000-4000-8000-000000000007",
                    body: data(transaction: transaction, extra: [#""consumptionRequestReason":"UNINTENDED_PURCHASE""#])
                ),
                true
            ),
            (
                "a type and shape not documented yet",
                notification(
                    "SUBSCRIPTION_PAUSED",
                    subtype: "VOLUNTARY",
                    uuid: "11111111-0000-4000-8000-000000000008",
                    body: #""pauseData":{"resumesDate":1800000000000,"nested":[1,2,3]}"#
                ),
                true
            ),
            (
                "appData with a forged app transaction",
                notification(
                    "RESCIND_CONSENT",
                    uuid: "11111111-0000-4000-8000-000000000009",
                    body: appData(signedAppTransaction: String(tamperedApp))
                ),
                false
            ),
            (
                "appData of another app",
                notification(
                    "RESCIND_CONSENT",
                    uuid: "11111111-0000-4000-8000-000000000010",
                    body: appData(bundleId: "com.example.other", signedAppTransaction: appTransaction)
                ),
                false
            ),
        ]
        return cases.map { ($0.0, pki.jws(payload: $0.1), $0.2) }
    }

    @Test func everyDocumentedShapeAndAnUnknownOneAreStoredAndOnlyForgeriesRefused() throws {
        let world = try StoreWorld()
        let lines = Self.lines()
        let result = try Self.importPayloads(lines.map(\.payload), into: world)
        let expectedStored = lines.filter(\.stored).count
        #expect(result.lines == lines.count)
        #expect(result.stored == expectedStored, "\(result.refused)")
        let refusedLines = Set(result.refused.map(\.line))
        for (index, line) in lines.enumerated() {
            #expect(refusedLines.contains(index + 1) == !line.stored, "\(line.name): \(result.refused)")
        }
        #expect(result.refused.contains { $0.line == 9 && $0.reason.contains("signedAppTransactionInfo") })
        #expect(result.refused.contains { $0.line == 10 && $0.reason.contains("bundle_mismatch") })

        let rows = try world.connection.query(
            "SELECT notification_type, environment, bundle_id, original_transaction_id FROM app_store_notifications"
        )
        #expect(rows.count == expectedStored)
        var byType: [String: (environment: String?, bundle: String?)] = [:]
        for row in rows {
            byType[try row.decode("notification_type", as: String.self)] = (
                try row.decode("environment", as: String?.self), try row.decode("bundle_id", as: String?.self)
            )
        }
        #expect(byType["RESCIND_CONSENT"]?.environment == "Production")
        #expect(byType["RESCIND_CONSENT"]?.bundle == Self.bundleId)
        #expect(byType["EXTERNAL_PURCHASE_TOKEN"]?.environment == "Production")
        #expect(byType["RENEWAL_EXTENSION"]?.bundle == Self.bundleId)
        #expect(byType["SUBSCRIPTION_PAUSED"] != nil)
        // A one-time charge names no subscription: not made due, not an unknown subscription in the report.
        let oneTime = try world.connection.queryFirst(
            "SELECT original_transaction_id, transaction_id FROM app_store_notifications WHERE notification_type = 'ONE_TIME_CHARGE'"
        )
        #expect(try oneTime?.decode("original_transaction_id", as: String?.self) == nil)
        #expect(try oneTime?.decode("transaction_id", as: String?.self) == "2000000811119999")
        #expect(result.unknownSubscriptions == ["2000000811111111"], "\(result.unknownSubscriptions)")

        // The report counts the one type this version does not know as not understood.
        let counts = Dictionary(
            rows.map { (try! $0.decode("notification_type", as: String.self), 1) },
            uniquingKeysWith: +
        )
        let report = ReportNotifications(byType: counts)
        #expect(report.notUnderstood == 1)
        #expect(ReportHTML.notificationsSection(report).contains("1 of a type this version does not know"))
    }

    /// A mass renewal-date extension (`RENEWAL_EXTENSION` / `SUMMARY`) names a product, not subscriptions: the run
    /// that takes it over makes that product's entitled rows due, and no others.
    @Test func aRenewalExtensionSummaryMakesTheProductsEntitledRowsDue() throws {
        let world = try StoreWorld()
        let product = "com.example.reader.monthly"
        let covered = [
            try world.insertSubscription("e1", expiresAt: StoreWorld.day(5), state: "active", productId: product),
            try world.insertSubscription(
                "e2",
                expiresAt: StoreWorld.day(1),
                state: "billing_retry",
                productId: product
            ),
        ]
        try world.insertSubscription("e3", expiresAt: StoreWorld.day(-9), state: "expired", productId: product)
        try world.insertSubscription("e4", expiresAt: StoreWorld.day(5), state: "active", productId: "other.product")
        let summary = try #require(Self.lines().first { $0.name == "summary" })
        let imported = try Self.importPayloads([summary.payload], into: world)
        #expect(imported.stored == 1)

        let runId = try world.createRun()
        let claimed = try NotificationStore.claimUnseen(runId: runId, dryRun: false, world.connection)
        #expect(claimed.claimed == 1 && claimed.madeDue == 0)
        #expect(try NotificationStore.makeExtendedDue(runId: runId, world.connection) == 2)
        let due = try world.connection.query(
            "SELECT subscription_id FROM reconciliation_items WHERE run_id = $1 AND due_reason = 'notification'",
            [runId]
        ).map { try $0.decode("subscription_id", as: Int64.self) }
        #expect(Set(due) == Set(covered))
        // Again (a resumed run): nothing more.
        #expect(try NotificationStore.makeExtendedDue(runId: runId, world.connection) == 0)
    }

    /// A `ONE_TIME_CHARGE` (a consumable) joins the ledger as a `one_time` row with Apple's price, and the run that
    /// claims the import counts it as money in its report, never as a subscription.
    @Test func aOneTimeChargeIsLedgerMoneyOfTheRunThatClaimsIt() throws {
        let world = try StoreWorld()
        let charge = try #require(Self.lines().first { $0.name == "a one-time charge" })
        let imported = try Self.importPayloads([charge.payload], into: world)
        #expect(imported.stored == 1)
        let row = try #require(
            try world.connection.queryFirst(
                """
                SELECT kind, price_milliunits, currency, first_seen_run_id FROM subscription_transactions
                 WHERE transaction_id = '2000000811119999'
                """
            )
        )
        #expect(try row.decode("kind", as: String.self) == "one_time")
        #expect(try row.decode("price_milliunits", as: Int64?.self) == 4990)
        #expect(try row.decode("first_seen_run_id", as: Int64?.self) == nil)
        #expect(try world.connection.count("SELECT count(*) AS n FROM subscriptions") == 0)

        let runId = try world.createRun()
        _ = try NotificationStore.claimUnseen(runId: runId, dryRun: false, world.connection)
        let transactions = try world.connection.query(
            ReportLoader.transactionsSQL(serverAPI: true, catalogPrices: true),
            [runId, Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 4_000_000_000), runId]
        ).map(ReportLoader.transaction)
        #expect(transactions.map(\.kind) == ["one_time"])
        var money: MoneyByCurrency.Lines = [:]
        for t in transactions {
            MoneyByCurrency.add(t, scope: .period, estimate: ProceedsEstimate(commission: .standard), to: &money)
        }
        let usd = try #require(MoneyByCurrency(lines: money, source: LedgerCurrencyMoney.source).currencies["USD"])
        #expect(usd.totals.grossMilliunits == 4990)
        #expect(usd.totals.paidTransactions == 1)
    }

    /// A one-time purchase's ONE_TIME_CHARGE and its later REFUND in one file, in either order: the ledger row says
    /// what the transaction is now (the notification Apple signed last), refunded.
    @Test(arguments: ["charge then refund", "refund then charge", "refund, then the charge in a later import"])
    func aOneTimePurchaseRefundedIsARefundWhateverTheOrderRead(order: String) throws {
        let world = try StoreWorld()
        let id = "2000000811117777"
        func charge(refunded: Bool, uuid: String, signedDate: Int64) -> String {
            let revocation = [
                #""revocationDate":\#(TestPayloads.signedDateMs - 5_000)"#, #""revocationReason":0"#,
                #""revocationType":"REFUND_FULL""#, #""revocationPercentage":100000"#,
            ]
            let transaction = Self.pki.jws(
                payload: TestPayloads.transaction(
                    transactionId: id,
                    originalTransactionId: id,
                    productId: "com.example.reader.coins100",
                    extra: refunded ? revocation : []
                ).replacingOccurrences(of: #""type":"Auto-Renewable Subscription""#, with: #""type":"Consumable""#)
            )
            let body = Self.notification(
                refunded ? "REFUND" : "ONE_TIME_CHARGE",
                uuid: uuid,
                body: Self.data(transaction: transaction)
            ).replacingOccurrences(
                of: #""signedDate":\#(TestPayloads.signedDateMs)"#,
                with: #""signedDate":\#(signedDate)"#
            )
            return Self.pki.jws(payload: body)
        }
        var lines = [
            charge(
                refunded: false,
                uuid: "22222222-0000-4000-8000-000000000001",
                signedDate: TestPayloads.signedDateMs
            ),
            charge(
                refunded: true,
                uuid: "22222222-0000-4000-8000-000000000002",
                signedDate: TestPayloads.signedDateMs + 1
            ),
        ]
        if order != "charge then refund" { lines.reverse() }
        let files = order.contains("later") ? lines.map { [$0] } : [lines]
        var stored = 0
        for file in files { stored += try Self.importPayloads(file, into: world).stored }
        #expect(stored == 2)
        let row = try #require(
            try world.connection.queryFirst(
                "SELECT kind, revocation_type FROM subscription_transactions WHERE transaction_id = $1",
                [id]
            )
        )
        #expect(try row.decode("kind", as: String.self) == "refund")
        #expect(try row.decode("revocation_type", as: String?.self) == "REFUND_FULL")
    }

    /// `notifications import` run as a user runs it, on a file of every documented shape plus one Apple has not
    /// documented yet: all stored, exit 0.
    @Test func theImportCommandStoresEveryShapeAndExitsZero() async throws {
        let world = try StoreWorld()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("shapes-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let root = directory.appendingPathComponent("root.pem")
        try Data(Self.pki.rootPEM.utf8).write(to: root)
        let file = directory.appendingPathComponent("webhook.jsonl")
        let stored = Self.lines().filter(\.stored)
        try Data((stored.map(\.payload).joined(separator: "\n") + "\n").utf8).write(to: file)
        var environment = ProcessInfo.processInfo.environment
        for name in ["APPLE_BUNDLE_ID", "APPLE_APP_APPLE_ID", "APPLE_ROOT_CA_FILE", "APPLE_ROOT_CA_ONLY"] {
            environment[name] = nil
        }
        environment["DATABASE_URL"] = world.database.url
        let outcome = try await ChildProcess.run(
            BuiltBinary.reconciler,
            [
                "notifications", "import", "--file", file.path, "--bundle-id", Self.bundleId, "--app-apple-id",
                String(Self.appAppleId), "--root-ca", root.path, "--root-ca-only",
            ],
            environment: environment
        )
        #expect(outcome.status == 0, "\(outcome.stdout) \(outcome.stderr)")
        #expect(
            outcome.stdout.contains("\(stored.count) notifications read, \(stored.count) stored"),
            "\(outcome.stdout)"
        )
        #expect(try world.connection.count("SELECT count(*) AS n FROM app_store_notifications") == stored.count)
    }
}
