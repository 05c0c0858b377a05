import Foundation
import TestSupport
import Testing

/// `renewal-reconciler explain`, run as a user runs it: the built binary, a saved response, JSON out.
@Suite struct ExplainCommandTests {
    /// The output keys, exactly and in this order.
    static let keys = [
        "apple_status", "environment", "verdict", "retryable", "reason", "original_transaction_id", "state",
        "expires_at", "product_id", "latest_transaction_id", "auto_renew", "auto_renew_product_id",
        "expiration_intent", "grace_period_expires_at", "in_billing_retry", "is_trial", "is_intro_offer",
        "revoked_at", "cancellation_reason", "app_account_token", "app_transaction_id", "price_increase_status",
        "renewal_price_milliunits", "renewal_currency", "renewal_billing_plan_type",
    ]
    static let now = "2024-06-01T00:00:00Z"

    private func fixture(_ name: String) -> String { ExplainRunner.fixturesDirectory.appendingPathComponent(name).path }

    /// Parses stdout as one JSON object and returns it with its top-level keys in output order.
    private func parse(_ stdout: String) throws -> (object: [String: Any], keys: [String]) {
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(stdout.utf8)) as? [String: Any],
            "not a JSON object: \(stdout)"
        )
        // Pretty output puts one member per line: `  "key": value`.
        let keys = stdout.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("  \""), let end = line.dropFirst(3).firstIndex(of: "\"") else { return nil }
            return String(line[line.index(line.startIndex, offsetBy: 3)..<end])
        }
        return (object, keys)
    }

    @Test func activeSubscriptionPrintsEveryKeyInOrder() async throws {
        let run = try await ExplainRunner.run([
            "explain", "--response", fixture("status_0_active_renewed.json"), "--bundle-id", "com.example.reader",
            "--now", Self.now,
        ])
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let (json, keys) = try parse(run.stdout)
        #expect(keys == Self.keys)
        #expect(json.count == Self.keys.count)
        #expect(json["apple_status"] as? Int == 0)
        #expect(json["environment"] as? String == "Production")
        #expect(json["verdict"] as? String == "ok")
        #expect(json["retryable"] as? Bool == false)
        #expect(json["reason"] is NSNull)
        #expect(json["original_transaction_id"] as? String == "1000000811111111")
        #expect(json["state"] as? String == "active")
        #expect(json["expires_at"] as? String == "2024-06-26T00:00:00Z")
        #expect(json["product_id"] as? String == "com.example.reader.monthly")
        #expect(json["latest_transaction_id"] as? String == "1000000811111203")
        #expect(json["auto_renew"] as? Bool == true)
        #expect(json["revoked_at"] is NSNull)
    }

    @Test func compactOutputIsOneLineWithTheSameMembers() async throws {
        let args = ["explain", "--response", fixture("grace_period.json"), "--now", Self.now]
        let pretty = try await ExplainRunner.run(args)
        let compact = try await ExplainRunner.run(args + ["--compact"])
        #expect(pretty.status == 0 && compact.status == 0, "stderr: \(pretty.stderr) \(compact.stderr)")
        #expect(compact.stdout.trimmingCharacters(in: .newlines).split(separator: "\n").count == 1)
        // Each form ends with exactly one newline (no blank line after the object).
        #expect(pretty.stdout.hasSuffix("}\n") && !pretty.stdout.hasSuffix("\n\n"))
        #expect(compact.stdout.hasSuffix("}\n") && !compact.stdout.hasSuffix("\n\n"))
        let a = try parse(pretty.stdout).object
        let b = try #require(try JSONSerialization.jsonObject(with: Data(compact.stdout.utf8)) as? [String: Any])
        let canonical = { (o: [String: Any]) in try JSONSerialization.data(withJSONObject: o, options: [.sortedKeys]) }
        #expect(try canonical(a) == canonical(b))
        #expect(a["state"] as? String == "grace_period")
    }

    @Test func dashReadsStandardInput() async throws {
        let path = fixture("status_0_active_renewed.json")
        let body = try Data(contentsOf: URL(fileURLWithPath: path))
        let fromFile = try await ExplainRunner.run(["explain", "--response", path, "--now", Self.now])
        let fromStdin = try await ExplainRunner.run(["explain", "--response", "-", "--now", Self.now], stdin: body)
        #expect(fromStdin.status == 0, "stderr: \(fromStdin.stderr)")
        #expect(fromStdin.stdout == fromFile.stdout)
        #expect(try parse(fromStdin.stdout).keys == Self.keys)

        let garbage = try await ExplainRunner.run(["explain", "--response", "-"], stdin: Data("<html>".utf8))
        #expect(garbage.status != 0)
        #expect(garbage.stderr.contains("<stdin>"))
    }

    @Test func nonZeroStatusExplainsTheVerdictWithoutAState() async throws {
        let run = try await ExplainRunner.run([
            "explain", "--response", fixture("status_21007_sandbox_receipt_in_production.json"), "--now", Self.now,
        ])
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let (json, keys) = try parse(run.stdout)
        #expect(keys == Self.keys)
        #expect(json["apple_status"] as? Int == 21007)
        #expect(json["verdict"] as? String == "switch_environment")
        #expect(json["retryable"] as? Bool == false)
        #expect((json["reason"] as? String)?.contains("21007") == true)
        #expect(json["state"] is NSNull)

        let retry = try await ExplainRunner.run([
            "explain", "--response", fixture("status_21005_server_unavailable.json"),
        ])
        let retryJSON = try parse(retry.stdout).object
        #expect(retryJSON["verdict"] as? String == "retry")
        #expect(retryJSON["retryable"] as? Bool == true)
    }

    /// Values Apple should never send (a date near Int64.max, one in year 287,000, a NUL character): a named
    /// rejection, never a crash.
    @Test(arguments: [
        ("implausible_date_near_int64_max.json", "latest_receipt_info[0].purchase_date_ms"),
        ("implausible_expires_date_far_future.json", "latest_receipt_info[1].expires_date_ms"),
        ("implausible_nul_in_text.json", "latest_receipt_info[1].product_id"),
    ])
    func implausibleValuesAreANamedRejection(file: String, field: String) async throws {
        let run = try await ExplainRunner.run(["explain", "--response", fixture(file), "--now", Self.now])
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let json = try parse(run.stdout).object
        #expect(json["verdict"] as? String == "reject")
        #expect(json["retryable"] as? Bool == false)
        let reason = json["reason"] as? String ?? ""
        #expect(reason.contains("implausible") || reason.contains("bounds"), "\(reason)")
        #expect(reason.contains(field), "\(reason)")
        #expect(json["state"] is NSNull)
    }

    @Test func accountNotFoundEndsTheEntitlement() async throws {
        let run = try await ExplainRunner.run([
            "explain", "--response", fixture("status_21010_account_not_found.json"), "--now", Self.now,
        ])
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let json = try parse(run.stdout).object
        #expect(json["verdict"] as? String == "reject")
        #expect((json["reason"] as? String)?.contains("21010") == true)
        #expect(json["state"] as? String == "expired")
        #expect(json["auto_renew"] as? Bool == false)
    }

    @Test func bundleMismatchIsRejected() async throws {
        let run = try await ExplainRunner.run([
            "explain", "--response", fixture("bundle_mismatch.json"), "--bundle-id", "com.example.reader",
            "--now", Self.now,
        ])
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let json = try parse(run.stdout).object
        #expect(json["verdict"] as? String == "reject")
        #expect((json["reason"] as? String)?.contains("bundle") == true)
    }

    @Test func missingFileIsAnErrorNamingIt() async throws {
        let path = "/nonexistent/dir/response-\(UUID().uuidString).json"
        let run = try await ExplainRunner.run(["explain", "--response", path])
        #expect(run.status == 64)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.contains(path))
        #expect(run.stderr.contains("no such file"))
    }

    @Test func nonJSONFileIsAnErrorNamingIt() async throws {
        let path = fixture("not_json_html_maintenance_page.html")
        let run = try await ExplainRunner.run(["explain", "--response", path])
        #expect(run.status == 64)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.contains(path))

        // An empty file in a temp dir as well.
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("explain-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let empty = dir.appendingPathComponent("empty.json")
        try Data().write(to: empty)
        let emptyRun = try await ExplainRunner.run(["explain", "--response", empty.path])
        #expect(emptyRun.status != 0)
        #expect(emptyRun.stderr.contains(empty.path))
    }

    @Test func severalSubscriptionsAreListedOnceAndExit64() async throws {
        let path = fixture("several_subscription_groups.json")
        let run = try await ExplainRunner.run(["explain", "--response", path, "--now", Self.now])
        #expect(run.status == 64)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.contains(path))
        for id in ["1000000811111111", "2000000922222222"] {
            #expect(
                run.stderr.components(separatedBy: id).count - 1 == 1,
                "\(id) listed more than once:\n\(run.stderr)"
            )
        }
        #expect(run.stderr.contains("--original-transaction-id"))

        let chosen = try await ExplainRunner.run([
            "explain", "--response", path, "--original-transaction-id", "2000000922222222", "--now", Self.now,
        ])
        #expect(chosen.status == 0, "stderr: \(chosen.stderr)")
        let json = try parse(chosen.stdout).object
        #expect(json["original_transaction_id"] as? String == "2000000922222222")
        #expect(json["product_id"] as? String == "com.example.reader.video.monthly")
        #expect(json["state"] as? String == "expired")
    }

    @Test(arguments: ["yesterday", "2024-06-01", "2024-06-01T00:00:00"])
    func badNowIsAnErrorNamingTheFlag(now: String) async throws {
        let run = try await ExplainRunner.run(["explain", "--response", fixture("grace_period.json"), "--now", now])
        #expect(run.status == 64)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.contains("--now"))
        #expect(run.stderr.contains(now))
    }

    @Test func badEnvironmentIsAnErrorNamingTheFlag() async throws {
        let run = try await ExplainRunner.run([
            "explain", "--response", fixture("grace_period.json"), "--environment", "staging",
        ])
        #expect(run.status == 64)
        #expect(run.stderr.contains("--environment"))
    }
}

/// Runs the built `renewal-reconciler` binary (`BuiltBinary`) and
/// captures its exit status, standard output and standard error.
enum ExplainRunner {
    struct Run {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    struct NotBuilt: Error, CustomStringConvertible {
        var searched: [String]
        var description: String { "renewal-reconciler binary not found (run swift build); looked in \(searched)" }
    }

    /// `Tests/ReceiptDomainTests/Fixtures` in this checkout.
    static let fixturesDirectory = EndToEndFixture.packageRoot.appendingPathComponent(
        "Tests/ReceiptDomainTests/Fixtures"
    )

    static func binary() throws -> URL {
        let url = URL(fileURLWithPath: BuiltBinary.reconciler)
        guard FileManager.default.isExecutableFile(atPath: url.path) else { throw NotBuilt(searched: [url.path]) }
        return url
    }

    static func run(_ arguments: [String], stdin: Data? = nil) async throws -> Run {
        var environment = ProcessInfo.processInfo.environment
        environment["APPLE_BUNDLE_ID"] = nil
        let outcome = try await ChildProcess.run(
            try binary().path,
            arguments,
            environment: environment,
            input: stdin
        )
        return Run(status: outcome.status, stdout: outcome.stdout, stderr: outcome.stderr)
    }
}
