import Crypto
import Foundation
import SignedDataTestSupport
import TestSupport
import Testing

/// `explain --jws`, `--receipt`, `--response` with a Get All Subscription Statuses body, and
/// `check-api-key`, run as a user runs them: the built binary, files made at test time.
@Suite struct SignedDataExplainTests {
    static let pki = try! TestPKI()

    /// A temporary directory holding the test root as PEM, and whatever else a test writes.
    final class Workspace {
        let url: URL
        init() throws {
            url = FileManager.default.temporaryDirectory.appendingPathComponent("signed-explain-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            try write("root.pem", SignedDataExplainTests.pki.rootPEM)
        }
        deinit { try? FileManager.default.removeItem(at: url) }
        @discardableResult func write(_ name: String, _ text: String) throws -> String {
            try write(name, Data(text.utf8))
        }
        @discardableResult func write(_ name: String, _ data: Data) throws -> String {
            let path = url.appendingPathComponent(name).path
            try data.write(to: URL(fileURLWithPath: path))
            return path
        }
        var root: String { url.appendingPathComponent("root.pem").path }
    }

    private func run(
        _ arguments: [String],
        environment extra: [String: String] = [:]
    ) async throws -> ExplainRunner.Run {
        var environment = ProcessInfo.processInfo.environment
        for name in [
            "APPLE_BUNDLE_ID", "APPLE_ROOT_CA_FILE", "APPLE_ROOT_CA_ONLY", "APPLE_PRIVATE_KEY_FILE",
            "APPLE_KEY_ID", "APPLE_ISSUER_ID", "CREDENTIALS_DIRECTORY",
        ] {
            environment[name] = nil
        }
        environment.merge(extra) { $1 }
        let outcome = try await ChildProcess.run(try ExplainRunner.binary().path, arguments, environment: environment)
        return ExplainRunner.Run(status: outcome.status, stdout: outcome.stdout, stderr: outcome.stderr)
    }

    private func object(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not JSON: \(text)")
    }

    @Test func aSignedTransactionVerifiesWithTheTestRoot() async throws {
        let work = try Workspace()
        let jws = try work.write("t.jws", Self.pki.jws(payload: TestPayloads.transaction()))
        let result = try await run([
            "explain", "--jws", jws, "--root-ca", work.root, "--bundle-id", TestPayloads.bundleId,
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try object(result.stdout)
        #expect(json["verified"] as? Bool == true)
        #expect(json["reason"] is NSNull)
        #expect(json["payload_type"] as? String == "transaction")
        let header = try #require(json["header"] as? [String: Any])
        #expect(header["alg"] as? String == "ES256")
        #expect(
            header["x5c"] as? [String] == [
                "Test App Store Receipt Signing", "Test Worldwide Developer Relations CA", "Test Root CA",
            ]
        )
        let payload = try #require(json["payload"] as? [String: Any])
        #expect(payload["transactionId"] as? String == "2000000811111203")
        #expect(payload["expiresDate"] as? String == "2026-12-18T11:06:40Z")
        #expect(payload["signedDate"] as? String == "2026-11-21T03:00:00Z")
        #expect(payload["price"] as? Int == 4990)
        // The same root through APPLE_ROOT_CA_FILE; and no test root at all: a chain Apple did not sign.
        let viaEnvironment = try await run(["explain", "--jws", jws], environment: ["APPLE_ROOT_CA_FILE": work.root])
        #expect(viaEnvironment.status == 0)
        let untrusted = try await run(["explain", "--jws", jws, "--compact"])
        #expect(untrusted.status == 1)
        #expect(try object(untrusted.stdout)["reason"] as? String == "chain_invalid")
    }

    /// A payload of a type explain does not decode (Apple's own minimal test vector names only a bundle id) is still
    /// held to `--bundle-id`, as Apple's verifier holds it (INVALID_APP_IDENTIFIER).
    @Test func anUnknownPayloadOfAnotherBundleIsRefused() async throws {
        let work = try Workspace()
        let payload = #"{"bundleId":"com.example","signedDate":\#(TestPayloads.signedDateMs)}"#
        let jws = try work.write("minimal.jws", Self.pki.jws(payload: payload))
        let other = try await run(["explain", "--jws", jws, "--root-ca", work.root, "--bundle-id", "com.example.x"])
        #expect(other.status == 1, "\(other.stdout)")
        let refused = try object(other.stdout)
        #expect(refused["payload_type"] as? String == "unknown")
        #expect(refused["reason"] as? String == "bundle_mismatch")
        let same = try await run(["explain", "--jws", jws, "--root-ca", work.root, "--bundle-id", "com.example"])
        #expect(same.status == 0, "\(same.stdout)")
        #expect(try object(same.stdout)["verified"] as? Bool == true)
    }

    @Test func refusalsExitOneWithTheirName() async throws {
        let work = try Workspace()
        let cases: [(String, String, [String])] = [
            (Self.pki.jws(payload: TestPayloads.transaction(), alg: "none"), "wrong_algorithm", []),
            (
                Self.pki.jws(payload: TestPayloads.transaction(bundleId: "com.other")), "bundle_mismatch",
                ["--bundle-id", TestPayloads.bundleId]
            ),
            (
                Self.pki.jws(payload: TestPayloads.transaction(environment: "Sandbox")), "environment_mismatch",
                ["--environment", "Production"]
            ),
            (
                Self.pki.jws(payload: TestPayloads.transaction(), signingKey: P256.Signing.PrivateKey()),
                "bad_signature", []
            ),
            ("not a jws", "malformed", []),
        ]
        for (index, (text, reason, extra)) in cases.enumerated() {
            let path = try work.write("r\(index).jws", text)
            let result = try await run(["explain", "--jws", path, "--root-ca", work.root] + extra)
            #expect(result.status == 1, "\(reason): \(result.stderr)")
            #expect(try object(result.stdout)["reason"] as? String == reason)
        }
        let unreadableRoot = try await run(["explain", "--jws", work.root, "--root-ca", "/nonexistent/root.pem"])
        #expect(unreadableRoot.status == 78)
        #expect(unreadableRoot.stderr.contains("--root-ca"))
    }

    @Test func aRealAppleNotificationVerifiesAgainstTheCompiledInRoot() async throws {
        let fixture = EndToEndFixture.packageRoot.appendingPathComponent(
            "Tests/AppStoreSignedDataTests/Fixtures/apple_sandbox_test_notification.jws"
        ).path
        let result = try await run(["explain", "--jws", fixture])
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
        let json = try object(result.stdout)
        #expect(
            (json["header"] as? [String: Any])?["x5c"] as? [String] == [
                "Prod ECC Mac App Store and iTunes Store Receipt Signing",
                "Apple Worldwide Developer Relations Certification Authority", "Apple Root CA - G3",
            ]
        )
        #expect((json["payload"] as? [String: Any])?["notificationType"] as? String == "TEST")
        // Trusting only a test root, Apple's own data no longer verifies.
        let work = try Workspace()
        let only = try await run(["explain", "--jws", fixture, "--root-ca", work.root, "--root-ca-only"])
        #expect(only.status == 1)
    }

    @Test func aNotificationShowsItsNestedSignedDataVerified() async throws {
        let work = try Workspace()
        let transaction = Self.pki.jws(payload: TestPayloads.transaction())
        let renewal = Self.pki.jws(payload: TestPayloads.renewalInfo())
        let notification = TestPayloads.notification(signedTransaction: transaction, signedRenewal: renewal)
        let body = #"{"signedPayload":"\#(Self.pki.jws(payload: notification))"}"#
        let path = try work.write("notification.json", body)
        let result = try await run(["explain", "--jws", path, "--root-ca", work.root])
        #expect(result.status == 0, "\(result.stderr)")
        let data = try #require((try object(result.stdout)["payload"] as? [String: Any])?["data"] as? [String: Any])
        let nested = try #require(data["signedTransactionInfo"] as? [String: Any])
        #expect(nested["verified"] as? Bool == true)
        #expect((nested["payload"] as? [String: Any])?["originalTransactionId"] as? String == "2000000811111111")
        #expect((data["signedRenewalInfo"] as? [String: Any])?["payload_type"] as? String == "renewal_info")
    }

    @Test func receiptsPrintEveryTransactionId() async throws {
        let work = try Workspace()
        let records = [
            TestReceipt.Record(transactionId: "1000000811111111", originalTransactionId: "1000000811111111"),
            TestReceipt.Record(transactionId: "1000000811111203", originalTransactionId: "1000000811111111"),
        ]
        for encoding in [TestReceipt.Encoding.der, .indefiniteBER] {
            let bytes = TestReceipt.appReceipt(bundleId: "com.example.reader", records: records, encoding: encoding)
            let path = try work.write("receipt-\(encoding).b64", Data(bytes).base64EncodedString())
            let result = try await run(["explain", "--receipt", path])
            #expect(result.status == 0, "\(result.stderr)")
            let json = try object(result.stdout)
            #expect(json["bundle_id"] as? String == "com.example.reader")
            #expect(json["signature_checked"] as? Bool == false)
            let inApp = try #require(json["in_app"] as? [[String: Any]])
            #expect(inApp.map { $0["transaction_id"] as? String } == ["1000000811111111", "1000000811111203"])
            #expect(inApp.first?["expires_date"] as? String == "2026-11-21T03:00:00Z")
            #expect(inApp.first?["original_transaction_id"] as? String == "1000000811111111")
        }
        let bytes = TestReceipt.appReceipt(bundleId: "b", records: records, encoding: .der)
        let truncated = try work.write("cut.b64", Data(bytes.prefix(bytes.count / 2)).base64EncodedString())
        let cut = try await run(["explain", "--receipt", truncated])
        #expect(cut.status == 64)
        #expect(cut.stderr.contains("truncated") && cut.stderr.contains(truncated))
        let garbage = try work.write("garbage.b64", "%%% not a receipt %%%")
        #expect(try await run(["explain", "--receipt", garbage]).stderr.contains("not_base64"))
    }

    private func statusBody(_ transaction: String, _ renewal: String, status: Int = 1) -> String {
        """
        {"environment":"Production","bundleId":"com.example.reader","appAppleId":1234567890,"data":[
          {"subscriptionGroupIdentifier":"21000001","lastTransactions":[{"status":\(status),
           "originalTransactionId":"2000000811111111","signedTransactionInfo":"\(transaction)",
           "signedRenewalInfo":"\(renewal)"}]}]}
        """
    }

    @Test func aStatusesBodyIsDecidedByTheSameEngine() async throws {
        let work = try Workspace()
        let transaction = Self.pki.jws(payload: TestPayloads.transaction())
        let renewal = Self.pki.jws(payload: TestPayloads.renewalInfo(autoRenewStatus: 0))
        let path = try work.write("statuses.json", statusBody(transaction, renewal))
        let result = try await run([
            "explain", "--response", path, "--root-ca", work.root, "--bundle-id", TestPayloads.bundleId,
            "--now", "2026-11-25T00:00:00Z",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try object(result.stdout)
        for key in ExplainCommandTests.keys + ["verified"] { #expect(json[key] != nil, "missing \(key)") }
        #expect(json["verified"] as? Bool == true)
        #expect(json["verdict"] as? String == "ok")
        #expect(json["state"] as? String == "active")
        #expect(json["expires_at"] as? String == "2026-12-18T11:06:40Z")
        #expect(json["auto_renew"] as? Bool == false)
        #expect(json["latest_transaction_id"] as? String == "2000000811111203")
        #expect(json["environment"] as? String == "Production")
        #expect(json["apple_status"] is NSNull)

        // Apple's status decides the state, as in the run (docs/decision-rules.md, "Precedence"): status 2 says
        // expired before the expiry date; status 1 after it still says active. A refund: revoked.
        let expiredPath = try work.write("expired.json", statusBody(transaction, renewal, status: 2))
        let expired = try await run([
            "explain", "--response", expiredPath, "--root-ca", work.root, "--now", "2026-11-25T00:00:00Z",
        ])
        #expect(try object(expired.stdout)["state"] as? String == "expired")
        let later = try await run([
            "explain", "--response", path, "--root-ca", work.root, "--now", "2027-01-30T00:00:00Z",
        ])
        #expect(try object(later.stdout)["state"] as? String == "active")
        let refunded = Self.pki.jws(
            payload: TestPayloads.transaction(extra: [
                #""revocationDate":1795500000000"#, #""revocationReason":1"#, #""revocationType":"REFUND_FULL""#,
            ])
        )
        let refundPath = try work.write("refund.json", statusBody(refunded, renewal))
        let revoked = try object(
            try await run([
                "explain", "--response", refundPath, "--root-ca", work.root, "--now", "2026-11-25T00:00:00Z",
            ]).stdout
        )
        #expect(revoked["state"] as? String == "revoked")
        #expect(revoked["cancellation_reason"] as? Int == 1)

        // A tampered signed transaction: not verified, never decided, exit 1.
        var parts = transaction.split(separator: ".").map(String.init)
        parts[1] = TestPKI.base64URL(Array(TestPayloads.transaction(expiresMs: 4_000_000_000_000).utf8))
        let tampered = try work.write("tampered.json", statusBody(parts.joined(separator: "."), renewal))
        let refused = try await run(["explain", "--response", tampered, "--root-ca", work.root])
        #expect(refused.status == 1)
        let refusedJSON = try object(refused.stdout)
        #expect(refusedJSON["verified"] as? Bool == false)
        #expect(refusedJSON["verdict"] as? String == "reject")
        #expect((refusedJSON["reason"] as? String)?.contains("bad_signature") == true)
        #expect(refusedJSON["state"] is NSNull)
    }

    /// The history pages the run read join the decision as in the run; one forged entry refuses the whole answer.
    @Test func historyPagesAreVerifiedAndJoinTheDecision() async throws {
        let work = try Workspace()
        let transaction = Self.pki.jws(payload: TestPayloads.transaction())
        let renewal = Self.pki.jws(payload: TestPayloads.renewalInfo(autoRenewStatus: 1))
        let statuses = try work.write("statuses.json", statusBody(transaction, renewal))
        func page(_ signed: [String]) -> String {
            let list = signed.map { "\"\($0)\"" }.joined(separator: ",")
            return """
                {"revision":"r1","hasMore":false,"bundleId":"\(TestPayloads.bundleId)","environment":"Production",
                 "signedTransactions":[\(list)]}
                """
        }
        let earlier = Self.pki.jws(
            payload: TestPayloads.transaction(
                transactionId: "2000000811111111",
                purchaseMs: 1_792_400_000_000,
                expiresMs: 1_795_000_000_000
            )
        )
        let good = try work.write("history.json", page([earlier, transaction]))
        let arguments = ["--root-ca", work.root, "--bundle-id", TestPayloads.bundleId, "--now", "2026-11-25T00:00:00Z"]
        let joined = try await run(["explain", "--response", statuses, "--history", good] + arguments)
        #expect(joined.status == 0, "\(joined.stderr)")
        #expect(try object(joined.stdout)["state"] as? String == "active")

        var parts = earlier.split(separator: ".").map(String.init)
        parts[1] = TestPKI.base64URL(Array(TestPayloads.transaction(expiresMs: 4_000_000_000_000).utf8))
        let forged = try work.write("forged.json", page([parts.joined(separator: "."), transaction]))
        let refused = try await run(
            ["explain", "--response", statuses, "--history", good, "--history", forged] + arguments
        )
        #expect(refused.status == 1)
        let json = try object(refused.stdout)
        #expect(json["verdict"] as? String == "reject")
        #expect((json["reason"] as? String)?.contains("bad_signature") == true, "\(json)")
        #expect(json["state"] is NSNull)

        let receipt = try work.write("verify.json", #"{"status": 21007}"#)
        let misused = try await run(["explain", "--response", receipt, "--history", good] + arguments)
        #expect(misused.status == 64)
        #expect(
            misused.stderr.contains("--history goes with a Get All Subscription Statuses body"),
            "\(misused.stderr)"
        )
    }

    /// An App Store Server API error answer is explained as the run takes it when it is the last answer.
    @Test func errorAnswersAreExplainedAsTheRunTakesThem() async throws {
        let work = try Workspace()
        func explain(_ body: String) async throws -> [String: Any] {
            let path = try work.write("error.json", body)
            let result = try await run(["explain", "--response", path, "--original-transaction-id", "2000000811111111"])
            #expect(result.status == 0, "\(result.stderr)")
            return try object(result.stdout)
        }
        let notFound = try await explain(#"{"errorCode":4040010,"errorMessage":"Transaction id not found."}"#)
        #expect(notFound["verdict"] as? String == "reject")
        #expect((notFound["reason"] as? String)?.contains("4040010 in production and sandbox") == true, "\(notFound)")
        let limited = try await explain(#"{"errorCode":4290000,"errorMessage":"Rate limit exceeded."}"#)
        #expect(limited["verdict"] as? String == "retry")
        #expect(limited["retryable"] as? Bool == true)
        let invalid = try await explain(#"{"errorCode":4000006,"errorMessage":"Invalid transaction id."}"#)
        #expect(invalid["verdict"] as? String == "reject")
        #expect((invalid["reason"] as? String)?.contains("errorCode 4000006") == true, "\(invalid)")
        #expect(invalid["state"] is NSNull)
    }

    @Test func helpListsTheNewForms() async throws {
        let help = try await run(["explain", "--help"])
        for option in ["--jws", "--receipt", "--response", "--history", "--root-ca", "Get All Subscription Statuses"] {
            #expect(help.stdout.contains(option), "\(option) not in --help")
        }
    }

    @Test func checkAPIKeySignsWithAP8AndRefusesOtherKeysWithExit78() async throws {
        let work = try Workspace()
        let key = P256.Signing.PrivateKey()
        let good = try work.write("AuthKey_ABC.p8", key.pemRepresentation)
        let ids = [
            "APPLE_KEY_ID": "ABC123DEFG", "APPLE_ISSUER_ID": "57246542-96fe", "APPLE_BUNDLE_ID": "com.example.reader",
        ]
        let result = try await run(["check-api-key", "--private-key-file", good], environment: ids)
        #expect(result.status == 0, "\(result.stderr)")
        let json = try object(result.stdout)
        #expect((json["header"] as? [String: Any])?["kid"] as? String == "ABC123DEFG")
        let claims = try #require(json["claims"] as? [String: Any])
        #expect(claims["aud"] as? String == "appstoreconnect-v1")
        #expect(claims["bid"] as? String == "com.example.reader")
        #expect((claims["exp"] as? Int ?? 0) - (claims["iat"] as? Int ?? 0) == 300)
        #expect(json["signature_verified"] as? Bool == true)
        // Through the systemd credential as well.
        try FileManager.default.createDirectory(
            at: work.url.appendingPathComponent("creds"),
            withIntermediateDirectories: true
        )
        try work.write("creds/apple-private-key", key.pemRepresentation)
        var viaCredential = ids
        viaCredential["CREDENTIALS_DIRECTORY"] = work.url.appendingPathComponent("creds").path
        #expect(try await run(["check-api-key"], environment: viaCredential).status == 0)

        let p384 = P384.Signing.PrivateKey().pemRepresentation
        let wrong = try work.write("wrong.p8", p384)
        let refused = try await run(["check-api-key", "--private-key-file", wrong], environment: ids)
        #expect(refused.status == 78)
        #expect(refused.stderr.contains("not an EC P-256 key"))
        let keyBody = p384.split(separator: "\n").filter { !$0.hasPrefix("-----") }
        for line in keyBody { #expect(!refused.stderr.contains(line) && !refused.stdout.contains(line)) }
        #expect(try await run(["check-api-key"], environment: ids).status == 78)
    }
}
