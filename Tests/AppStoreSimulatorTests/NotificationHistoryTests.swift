import Foundation
import Testing

@testable import AppStoreSimulator

@Suite struct NotificationHistoryTests {
    static let now = PopulationTests.now

    static func body(start: Int64, end: Int64, extra: String = "") -> [UInt8] {
        Array(#"{"startDate":\#(start),"endDate":\#(end)\#(extra)}"#.utf8)
    }

    static func post(_ client: ServerAPIClient, _ path: String, _ body: [UInt8]) async throws -> TestResponse {
        try await client.connection.send(.POST, path, body: body, headers: [client.fresh.authorization])
    }

    /// Pages to the end; returns every item (signed payload verified) and its send attempts.
    static func pageAll(
        _ client: ServerAPIClient,
        sandbox: Bool = false,
        body: [UInt8]
    )
        async throws -> [([String: Any], [[String: Any]])]
    {
        var items: [([String: Any], [[String: Any]])] = []
        var token: String?
        let path = ServerAPIClient.base(sandbox: sandbox) + "/inApps/v1/notifications/history"
        while true {
            let r = try await post(client, path + (token.map { "?paginationToken=" + $0 } ?? ""), body)
            #expect(r.status == 200)
            let json = try #require(r.json)
            let page = try #require(json["notificationHistory"] as? [[String: Any]])
            #expect(page.count <= 20)
            for item in page {
                let payload = try await client.verifier.verify(try #require(item["signedPayload"] as? String))
                items.append((payload, item["sendAttempts"] as? [[String: Any]] ?? []))
            }
            token = json["paginationToken"] as? String
            guard json["hasMore"] as? Bool == true else { break }
            #expect(page.count == 20)
        }
        return items
    }

    @Test func historyOfTheWindowPagesToTheEndAndVerifies() async throws {
        try await withSimulator(subscriptions: 300, configure: { $0.serverAPILimits = .unlimited }) { server in
            let client = try await ServerAPIClient.connect(to: server)
            let start = Self.now - 60 * SimTime.day
            let items = try await Self.pageAll(client, body: Self.body(start: start, end: Self.now + 1))
            var expected = 0
            for family in server.population.families
            where !family.sandbox && family.bundleId == server.population.bundleId && family.fixedStatus != 21010 {
                for p in family.subscriptions.indices {
                    expected +=
                        NotificationHistory.events(family: family, planIndex: p, now: Self.now)
                        .filter { $0.date >= start && $0.date <= Self.now }.count
                }
            }
            expected +=
                NotificationHistory.populationEvents(server.population, family: nil, sandbox: false, now: Self.now)
                .filter { $0.date >= start && $0.date <= Self.now }.count
            #expect(items.count == expected && expected > 40)
            let types = Set(items.compactMap { $0.0["notificationType"] as? String })
            let wanted = [
                "SUBSCRIBED", "DID_RENEW", "REFUND", "EXPIRED", "DID_FAIL_TO_RENEW",
                "DID_CHANGE_RENEWAL_STATUS",
            ]
            for t in wanted {
                #expect(types.contains(t), "\(t) missing from \(types)")
            }
            #expect(Set(items.compactMap { $0.0["notificationUUID"] as? String }).count == items.count)
            var dates: [Int64] = []
            for (payload, attempts) in items.prefix(60) {
                #expect(!attempts.isEmpty)
                dates.append((payload["signedDate"] as? NSNumber)?.int64Value ?? 0)
                // `summary`, `appData` and an undocumented type's payload have no `data`; one-time purchases no
                // renewal info.
                guard let data = payload["data"] as? [String: Any] else { continue }
                #expect(data["environment"] as? String == "Production")
                if let jws = data["signedTransactionInfo"] as? String { _ = try await client.verifier.verify(jws) }
                if let jws = data["signedRenewalInfo"] as? String { _ = try await client.verifier.verify(jws) }
            }
            #expect(dates == dates.sorted())
            let failed = items.filter { ($0.1.last?["sendAttemptResult"] as? String) != "SUCCESS" }
            let onlyFailures = try await Self.pageAll(
                client,
                body: Self.body(start: start, end: Self.now + 1, extra: #","onlyFailures":true"#)
            )
            #expect(onlyFailures.count == failed.count)
            await client.close()
        }
    }

    @Test func filtersLimitsAndTokens() async throws {
        try await withSimulator(subscriptions: 300, configure: { $0.serverAPILimits = .unlimited }) { server in
            let client = try await ServerAPIClient.connect(to: server)
            let path = "/inApps/v1/notifications/history"
            let old = try await Self.post(client, path, Self.body(start: Self.now - 181 * SimTime.day, end: Self.now))
            #expect(old.status == 400 && old.json?["errorCode"] as? Int == 4_000_012)
            let sandboxOld = try await Self.post(
                client,
                "/sandbox" + path,
                Self.body(start: Self.now - 31 * SimTime.day, end: Self.now)
            )
            #expect(sandboxOld.json?["errorCode"] as? Int == 4_000_012)
            let sandboxRecent = try await Self.post(
                client,
                "/sandbox" + path,
                Self.body(start: Self.now - 29 * SimTime.day, end: Self.now)
            )
            #expect(sandboxRecent.status == 200)
            let reversed = try await Self.post(client, path, Self.body(start: Self.now, end: Self.now - 1))
            #expect(reversed.json?["errorCode"] as? Int == 4_000_013)
            let start = Self.now - 179 * SimTime.day
            let first = try #require(try await Self.post(client, path, Self.body(start: start, end: Self.now)).json)
            #expect(first["hasMore"] as? Bool == true)
            let token = try #require(first["paginationToken"] as? String)
            let other = try await Self.post(
                client,
                path + "?paginationToken=" + token,
                Self.body(start: start + 1, end: Self.now)
            )
            #expect(other.json?["errorCode"] as? Int == 4_000_014)

            let refunds = try await Self.pageAll(
                client,
                body: Self.body(start: start, end: Self.now, extra: #","notificationType":"REFUND""#)
            )
            #expect(!refunds.isEmpty && refunds.allSatisfy { $0.0["notificationType"] as? String == "REFUND" })

            let family = try #require(server.population.families.first { $0.scenario == .billingRetry })
            let mine = try await Self.pageAll(
                client,
                body: Self.body(
                    start: start,
                    end: Self.now,
                    extra: #","transactionId":"\#(family.primaryOriginalTransactionId)""#
                )
            )
            #expect(!mine.isEmpty)
            for (payload, _) in mine {
                // The customer's one-time purchases and notices are theirs too; they carry no renewal info.
                guard let data = payload["data"] as? [String: Any], let jws = data["signedRenewalInfo"] as? String
                else { continue }
                let renewal = try await client.verifier.verify(jws)
                #expect(renewal["originalTransactionId"] as? String == String(family.primaryOriginalTransactionId))
            }
            #expect(mine.contains { $0.0["notificationType"] as? String == "DID_FAIL_TO_RENEW" })
            await client.close()
        }
    }
}

extension NotificationHistoryTests {
    /// The cases a nightly window cannot see (it re-verifies subscriptions near their expiry): a yearly refunded
    /// months before its expiry, and a yearly whose auto-renew was turned off mid-period, are in the history.
    @Test func midPeriodYearlyRefundsAndAutoRenewOffAreNotified() async throws {
        try await withSimulator(subscriptions: 2000, configure: { $0.serverAPILimits = .unlimited }) { server in
            let client = try await ServerAPIClient.connect(to: server)
            let start = Self.now - 179 * SimTime.day
            var refunds = 0
            var autoRenewOff = 0
            for family in server.population.families
            where !family.sandbox && family.fixedStatus == nil && family.bundleId == server.population.bundleId {
                guard let plan = family.subscriptions.first else { continue }
                let txns = plan.timeline(at: Self.now).transactions
                let yearlyRefund = txns.first {
                    $0.product.period == .year && $0.isRefunded && ($0.cancellation ?? 0) >= start
                        && $0.expires - ($0.cancellation ?? 0) > 60 * SimTime.day
                }
                let offMidYear =
                    plan.autoRenewOffAt.flatMap { off in
                        txns.last.map {
                            $0.product.period == .year && off >= start && $0.expires - off > 60 * SimTime.day
                        }
                    } ?? false
                guard yearlyRefund != nil || offMidYear else { continue }
                let items = try await Self.pageAll(
                    client,
                    body: Self.body(
                        start: start,
                        end: Self.now,
                        extra: #","transactionId":"\#(plan.originalTransactionId)""#
                    )
                )
                if let t = yearlyRefund {
                    // The subscription's REFUND (the customer may also have refunded one-time purchases).
                    let refund = items.first {
                        $0.0["notificationType"] as? String == "REFUND"
                            && ($0.0["signedDate"] as? NSNumber)?.int64Value == t.cancellation
                    }
                    #expect((refund?.0["signedDate"] as? NSNumber)?.int64Value == t.cancellation)
                    if refund != nil { refunds += 1 }
                }
                if offMidYear {
                    let off = items.first { $0.0["subtype"] as? String == "AUTO_RENEW_DISABLED" }
                    let renewal = try await client.verifier.verify(
                        try #require((off?.0["data"] as? [String: Any])?["signedRenewalInfo"] as? String)
                    )
                    #expect(renewal["autoRenewStatus"] as? Int == 0)
                    autoRenewOff += 1
                }
            }
            #expect(refunds >= 1 && autoRenewOff >= 1, "refunds \(refunds), auto-renew off \(autoRenewOff)")
            await client.close()
        }
    }
}
