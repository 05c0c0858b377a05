import CivilTime
import Foundation
import Testing

@testable import ReceiptDomain

/// Runs every fixture scenario under `Fixtures/` (one body + one `*.expect.json` each) through the
/// classifier and, for `ok` verdicts with a stored row, through the decision engine.
@Suite struct FixtureScenarioTests {
    @Test func thereAreAtLeastFortyScenarios() {
        #expect(Scenario.allNames().count >= 40)
    }

    /// Every row of Apple's status table, and every spelling of the 21100-21199 retry flag, has a fixture.
    @Test func statusTableIsCovered() throws {
        var statuses: Set<Int> = []
        var retryFlags: Set<String> = []
        for name in Scenario.allNames() {
            let scenario = try Scenario.load(name)
            guard let body = scenario.body,
                let json = try? JSONDecoder().decode(SidecarJSON.self, from: Data(body))
            else { continue }
            let status = json["status"]?.int ?? json["status"]?.string.flatMap { Int($0) }
            guard let status else { continue }
            statuses.insert(status)
            if (21100...21199).contains(status) {
                let flag =
                    json["is_retryable"].map { "is_retryable=\($0)" }
                    ?? json["is-retryable"].map { "is-retryable=\($0)" }
                retryFlags.insert(flag ?? "absent")
            }
        }
        let table: Set<Int> = [0, 21000, 21002, 21003, 21004, 21005, 21006, 21007, 21008, 21009, 21010]
        #expect(table.isSubset(of: statuses), "missing: \(table.subtracting(statuses).sorted())")
        #expect(statuses.contains { !table.contains($0) && !(21100...21199).contains($0) }, "no unknown status")
        #expect(retryFlags.contains("absent"))
        #expect(retryFlags.count >= 6, "\(retryFlags.sorted())")
    }

    @Test(arguments: Scenario.allNames())
    func scenario(_ name: String) throws {
        let scenario = try Scenario.load(name)
        let expect = try #require(scenario.sidecar["expect"], "\(name): sidecar has no expect")
        var body = scenario.body ?? []
        if let target = scenario.sidecar["inflate_to_bytes"]?.int {
            body = try Self.inflate(body, to: target)
            #expect(body.count >= target)
        }
        let now = try scenario.now
        let verdict = VerifyClassifier.classify(
            transportFailure: scenario.transport,
            httpStatus: scenario.sidecar["http_status"]?.int ?? 200,
            header: scenario.header,
            body: body,
            requestedEnvironment: scenario.requestedEnvironment,
            now: now
        )

        #expect(verdict.name == expect["verdict"]?.string, "\(name): verdict \(verdict.name)")
        if let code = expect["reason_code"]?.string {
            #expect(verdict.reason?.code.rawValue == code, "\(name): reason \(String(describing: verdict.reason))")
        }
        if let text = expect["reason_contains"]?.string {
            #expect(
                verdict.reason?.description.contains(text) == true,
                "\(name): \(String(describing: verdict.reason))"
            )
        }
        if let earliest = expect["earliest"] {
            guard case .retry(_, let actual) = verdict else {
                Issue.record("\(name): expected a retry verdict with earliest")
                return
            }
            if earliest.isNull {
                #expect(actual == nil)
            } else {
                let wanted = try #require(earliest.string.flatMap(SidecarJSON.date))
                #expect(
                    actual.map { abs($0.timeIntervalSince(wanted)) < 0.001 } == true,
                    "\(name): earliest \(String(describing: actual))"
                )
            }
        }
        if let target = expect["switch_to"]?.string {
            #expect(verdict == .switchEnvironment(to: try #require(AppleEnvironment(rawValue: target))))
        }
        if let parseCode = expect["parse_error"]?.string {
            do {
                _ = try VerifyReceiptResponse.parse(body)
                Issue.record("\(name): expected a parse error \(parseCode)")
            } catch {
                #expect(error.code.rawValue == parseCode, "\(name): \(error)")
                if let offset = expect["parse_error_byte"]?.int {
                    #expect(error.byteOffset == offset, "\(name): \(error)")
                }
                if let field = expect["parse_error_field"]?.string {
                    #expect(error.field == field, "\(name): \(error)")
                    #expect(error.description.contains(field))
                }
            }
        }
        if let decisionExpect = expect["decision"] {
            // Decisions come from usable answers (0/21006) and from 21010, which ends the entitlement.
            let decidable: VerifyReceiptResponse
            switch verdict {
            case .ok(let response):
                decidable = response
            case .reject(let reason) where reason.code == .accountNotFound:
                decidable = try VerifyReceiptResponse.parse(body)
            default:
                Issue.record("\(name): a decision is expected but the verdict is \(verdict.name)")
                return
            }
            let response = decidable
            let stored = try #require(try scenario.stored, "\(name): a decision needs a stored row")
            let decision = DecisionEngine.decide(
                stored: stored,
                response: response,
                now: now,
                bundleId: scenario.sidecar["bundle_id"]?.string
            )
            try Self.check(decision, against: decisionExpect, name: name)
            Self.checkInvariants(decision, stored: stored, name: name)
        }
    }

    /// Compares only the keys the sidecar lists; `null` means "must be nil".
    static func check(_ decision: Decision, against expect: SidecarJSON, name: String) throws {
        func checkDate(_ key: String, _ actual: Date?) {
            guard let wanted = expect[key] else { return }
            if wanted.isNull {
                #expect(actual == nil, "\(name): \(key) should be nil, is \(String(describing: actual))")
            } else if let text = wanted.string, let date = SidecarJSON.date(text) {
                #expect(
                    actual.map { abs($0.timeIntervalSince(date)) < 0.0005 } == true,
                    "\(name): \(key) \(actual.map(RFC3339.string) ?? "nil") != \(text)"
                )
            } else {
                Issue.record("\(name): unreadable expected date for \(key)")
            }
        }
        func checkString(_ key: String, _ actual: String?) {
            guard let wanted = expect[key] else { return }
            #expect(actual == wanted.string, "\(name): \(key) \(actual ?? "nil") != \(wanted)")
        }
        func checkInt(_ key: String, _ actual: Int?) {
            guard let wanted = expect[key] else { return }
            #expect(actual == wanted.int, "\(name): \(key) \(String(describing: actual)) != \(wanted)")
        }
        func checkBool(_ key: String, _ actual: Bool?) {
            guard let wanted = expect[key] else { return }
            #expect(actual == wanted.bool, "\(name): \(key) \(String(describing: actual)) != \(wanted)")
        }
        let known: Set<String> = [
            "outcome", "state", "expires_at", "product_id", "latest_transaction_id", "auto_renew",
            "auto_renew_product_id", "expiration_intent", "grace_period_expires_at", "in_billing_retry", "is_trial",
            "is_intro_offer", "revoked_at", "cancellation_reason", "environment", "expiry_moved_backwards",
            "reject_reason", "ledger_kinds", "ledger_offers", "ledger_ownership", "has_notes", "has_latest_receipt",
        ]
        for key in expect.keys { #expect(known.contains(key), "\(name): unknown expectation key \(key)") }

        checkString("outcome", decision.outcome.rawValue)
        checkString("state", decision.state?.rawValue)
        checkDate("expires_at", decision.expiresAt)
        checkString("product_id", decision.productId)
        checkString("latest_transaction_id", decision.latestTransactionId)
        checkBool("auto_renew", decision.autoRenew)
        checkString("auto_renew_product_id", decision.autoRenewProductId)
        checkInt("expiration_intent", decision.expirationIntent)
        checkDate("grace_period_expires_at", decision.gracePeriodExpiresAt)
        checkBool("in_billing_retry", decision.inBillingRetry)
        checkBool("is_trial", decision.isTrial)
        checkBool("is_intro_offer", decision.isIntroOffer)
        checkDate("revoked_at", decision.revokedAt)
        checkInt("cancellation_reason", decision.cancellationReason)
        checkString("environment", decision.environment?.rawValue)
        checkBool("expiry_moved_backwards", decision.expiryMovedBackwards)
        checkString("reject_reason", decision.rejectReason?.code.rawValue)
        checkBool("has_notes", !decision.notes.isEmpty)
        checkBool("has_latest_receipt", decision.latestReceipt != nil)
        if let kinds = expect["ledger_kinds"]?.array {
            #expect(decision.ledger.map(\.kind.rawValue) == kinds.compactMap(\.string), "\(name): ledger kinds")
        }
        if let offers = expect["ledger_offers"]?.array {
            #expect(decision.ledger.map(\.offer) == offers.map(\.string), "\(name): ledger offers")
        }
        if let ownership = expect["ledger_ownership"]?.array {
            #expect(decision.ledger.map(\.ownershipType) == ownership.map(\.string), "\(name): ledger ownership")
        }
    }

    /// Rules that hold for every decision, whatever the scenario.
    static func checkInvariants(_ decision: Decision, stored: StoredSubscription, name: String) {
        if let before = stored.expiresAt, let after = decision.expiresAt, after < before {
            #expect(decision.expiryMovedBackwards, "\(name): expiry moved backwards silently")
            #expect(decision.expiryMovedBackwardsReason != nil, "\(name): backwards move without a reason")
        }
        if decision.outcome == .rejected {
            #expect(decision.state == nil && decision.rejectReason != nil && decision.latestReceipt == nil)
        }
        if decision.state == .active, let expiry = decision.expiresAt {
            #expect(expiry > Date(timeIntervalSince1970: 0))
        }
    }

    /// Inserts generated transactions of other subscriptions into `latest_receipt_info` until the body
    /// reaches `target` bytes (so the repository does not carry a 10 MB file).
    static func inflate(_ template: [UInt8], to target: Int) throws -> [UInt8] {
        let text = String(decoding: template, as: UTF8.self)
        let marker = "\"latest_receipt_info\": ["
        let range = try #require(text.range(of: marker), "template has no latest_receipt_info")
        var filler = ""
        filler.reserveCapacity(target)
        var index = 0
        while filler.utf8.count + template.count < target {
            let otid = String(3_000_000_000_000_000 + index / 24)
            let purchase = 1_500_000_000_000 + Int64(index) * 2_592_000_000 / 24
            filler += """
                {"quantity": "1", "product_id": "com.example.reader.archive.\(index % 7)", \
                "transaction_id": "\(4_000_000_000_000_000 + index)", "original_transaction_id": "\(otid)", \
                "purchase_date": "2017-07-14 02:40:00 Etc/GMT", "purchase_date_ms": "\(purchase)", \
                "purchase_date_pst": "2017-07-13 19:40:00 America/Los_Angeles", \
                "original_purchase_date_ms": "\(purchase)", "expires_date_ms": "\(purchase + 2_592_000_000)", \
                "web_order_line_item_id": "\(5_000_000_000_000 + index)", "is_trial_period": "false", \
                "is_in_intro_offer_period": "false", "in_app_ownership_type": "PURCHASED", \
                "subscription_group_identifier": "\(20_600_000 + index / 24)", "note": "caf\\u00e9 \\"quoted\\""},

                """
            index += 1
        }
        var result = text
        result.insert(contentsOf: filler, at: range.upperBound)
        return Array(result.utf8)
    }
}
