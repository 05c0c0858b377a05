import Foundation
import Testing

@testable import AppStoreSimulator

@Suite struct ServerAPIHistoryTests {
    static let now = PopulationTests.now

    /// Pages `path` (with `query`) to the end; returns the verified payloads and the page sizes.
    static func pageAll(
        _ client: ServerAPIClient,
        _ path: String,
        query: String = ""
    )
        async throws -> (payloads: [[String: Any]], pages: [Int])
    {
        var payloads: [[String: Any]] = []
        var pages: [Int] = []
        var revision: String?
        while true {
            var q = query
            if let revision { q += (q.isEmpty ? "" : "&") + "revision=" + revision }
            let r = try await client.get(path + (q.isEmpty ? "" : "?" + q))
            #expect(r.status == 200, "\(path)?\(q)")
            let body = try #require(r.json)
            let signed = try #require(body["signedTransactions"] as? [String])
            pages.append(signed.count)
            for jws in signed { payloads.append(try await client.verifier.verify(jws)) }
            revision = try #require(body["revision"] as? String)
            guard body["hasMore"] as? Bool == true else { break }
            #expect(pages.count < 100)
        }
        return (payloads, pages)
    }

    @Test func historyPagesToTheEndInOrder() async throws {
        try await withSimulator(subscriptions: 300, configure: { $0.serverAPILimits = .unlimited }) { server in
            let client = try await ServerAPIClient.connect(to: server)
            let family = try #require(server.population.families.first { $0.scenario == .longHistory })
            let expected = family.subscriptions.flatMap { $0.timeline(at: Self.now).transactions }
                .sorted { ($0.purchase, $0.transactionId) < ($1.purchase, $1.transactionId) }
            #expect(expected.count > 40, "long_history spans several pages")
            let path = "/inApps/v2/history/\(family.primaryOriginalTransactionId)"
            let (payloads, pages) = try await Self.pageAll(client, path)
            #expect(payloads.map { $0["transactionId"] as? String } == expected.map { String($0.transactionId) })
            #expect(pages.dropLast().allSatisfy { $0 == 20 } && (pages.last ?? 0) <= 20)

            let (down, _) = try await Self.pageAll(client, path, query: "sort=DESCENDING")
            #expect(down.map { $0["transactionId"] as? String } == expected.reversed().map { String($0.transactionId) })

            // A page token only works with the query it was made for.
            let first = try #require(try await client.get(path).json)
            let token = try #require(first["revision"] as? String)
            let mismatched = try await client.get(path + "?sort=DESCENDING&revision=" + token)
            #expect(mismatched.status == 400 && mismatched.json?["errorCode"] as? Int == 4_000_005)
            let forged = try await client.get(path + "?revision=" + TestAPIToken.b64(Array("20.0".utf8)))
            #expect(forged.json?["errorCode"] as? Int == 4_000_005)
            #expect(try await client.get(path + "?sort=SIDEWAYS").status == 400)

            // Date window: [startDate, endDate) on purchaseDate.
            let mid = expected[expected.count / 2].purchase
            let (window, _) = try await Self.pageAll(client, path, query: "startDate=\(mid)")
            #expect(window.count == expected.filter { $0.purchase >= mid }.count)
            let (before, _) = try await Self.pageAll(client, path, query: "endDate=\(mid)")
            #expect(before.count == expected.filter { $0.purchase < mid }.count)
            await client.close()
        }
    }

    @Test func historyFiltersAndRefundHistory() async throws {
        try await withSimulator(subscriptions: 300, configure: { $0.serverAPILimits = .unlimited }) { server in
            let client = try await ServerAPIClient.connect(to: server)
            var sawRefund = false
            for family in server.population.families
            where family.fixedStatus != 21010 && family.bundleId == server.population.bundleId {
                let base = ServerAPIClient.base(sandbox: family.sandbox)
                let all = family.subscriptions.flatMap { $0.timeline(at: Self.now).transactions }
                guard family.scenario == .multiGroup || all.contains(where: \.isRefunded) else { continue }
                let id = family.primaryOriginalTransactionId
                let (revoked, _) = try await Self.pageAll(
                    client,
                    base + "/inApps/v2/history/\(id)",
                    query: "revoked=true"
                )
                #expect(revoked.count == all.filter(\.isRefunded).count)
                #expect(
                    revoked.allSatisfy { p in
                        let type = p["revocationType"] as? String
                        let share = (p["revocationPercentage"] as? NSNumber)?.int64Value ?? 0
                        return p["revocationDate"] != nil
                            && (type == "REFUND_FULL" && share == 100_000
                                || type == "REFUND_PRORATED" && share < 100_000)
                    }
                )
                let (refunds, _) = try await Self.pageAll(client, base + "/inApps/v2/refund/lookup/\(id)")
                // Every refunded in-app purchase of the customer: its one-time purchases too.
                let oneTime = server.population.oneTimePurchases.filter {
                    $0.familyIndex == family.index && $0.isRefunded(at: Self.now)
                }
                #expect(
                    Set(refunds.compactMap { $0["transactionId"] as? String })
                        == Set(all.filter(\.isRefunded).map { String($0.transactionId) })
                        .union(oneTime.map { String($0.transactionId) })
                )
                sawRefund = sawRefund || !refunds.isEmpty
                if family.scenario == .multiGroup, let group = family.subscriptions.first?.product.groupId {
                    let (inGroup, _) = try await Self.pageAll(
                        client,
                        base + "/inApps/v2/history/\(id)",
                        query: "subscriptionGroupIdentifier=\(group)"
                    )
                    #expect(inGroup.count == all.filter { $0.product.groupId == group }.count)
                    #expect(inGroup.count < all.count)
                }
            }
            #expect(sawRefund)
            await client.close()
        }
    }
}
