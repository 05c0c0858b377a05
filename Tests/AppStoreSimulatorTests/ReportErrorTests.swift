import Foundation
import Testing

@testable import AppStoreSimulator

/// The report downloads' errors, as Apple documents them (docs/simulator.md, "App Store Connect reports"): 401
/// NOT_AUTHORIZED for anything but a team key's App Store Connect token, 400 PARAMETER_ERROR.INVALID naming the filter,
/// 404 NOT_FOUND for a report not available yet and for a day without sales, 410 past a year, 406 for another
/// `Accept`, and the hourly budget's `X-Rate-Limit` and 429.
@Suite struct ReportErrorTests {
    /// `user-hour-lim:L;user-hour-rem:N;` with N at most L.
    static func isRateLimit(_ header: String?) -> Bool {
        guard let header, header.hasPrefix("user-hour-lim:"), header.hasSuffix(";") else { return false }
        let values = header.dropLast().split(separator: ";").map { $0.split(separator: ":") }
        guard values.count == 2, values.allSatisfy({ $0.count == 2 }), values[1][0] == "user-hour-rem",
            let limit = Int(values[0][1]), let remaining = Int(values[1][1])
        else { return false }
        return (0...limit).contains(remaining)
    }

    func expectError(
        _ response: TestResponse,
        _ status: Int,
        _ code: String,
        detail: String? = nil,
        parameter: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let error = ReportClient.error(response)
        #expect(response.status == status, sourceLocation: sourceLocation)
        #expect(
            error?.status == String(status) && error?.code == code,
            "\(String(describing: error))",
            sourceLocation: sourceLocation
        )
        if let detail {
            #expect(
                error?.detail.contains(detail) == true,
                "\(String(describing: error))",
                sourceLocation: sourceLocation
            )
        }
        if let parameter { #expect(error?.parameter == parameter, sourceLocation: sourceLocation) }
        #expect(Self.isRateLimit(response.header("X-Rate-Limit")), sourceLocation: sourceLocation)
    }

    @Test func everyTokenButTheTeamKeysAppStoreConnectTokenIsNotAuthorized() async throws {
        try await withSimulator(subscriptions: 50) { server in
            let client = ReportClient(server)
            let path = client.subscriberPath("2026-11-19")
            let identity = server.serverAPI.identity
            var serverAPIToken = client.token
            serverAPIToken.key = identity.apiKey
            serverAPIToken.keyId = identity.keyId
            serverAPIToken.bundleId = identity.bundleId
            var withBid = client.token
            withBid.bundleId = identity.bundleId
            var tooLong = client.token
            tooLong.lifetime = 21 * 60
            var otherIssuer = client.token
            otherIssuer.issuerId = UUID().uuidString.lowercased()
            var otherAudience = client.token
            otherAudience.audience = "appstoreconnect-v2"
            var forged = client.token
            forged.signingKey = .init()
            for token in [serverAPIToken, withBid, tooLong, otherIssuer, otherAudience, forged] {
                expectError(try await client.get(path, token: token), 401, "NOT_AUTHORIZED")
            }
            let c = try await TestConnection.connect(port: server.port)
            expectError(try await c.send(.GET, path), 401, "NOT_AUTHORIZED")
            await c.close()
            var twentyMinutes = client.token
            twentyMinutes.lifetime = 20 * 60
            #expect(try await client.get(path, token: twentyMinutes).status == 200)
        }
    }

    @Test func aMissingOrInvalidFilterIsAParameterErrorNamingIt() async throws {
        try await withSimulator(subscriptions: 50) { server in
            let c = ReportClient(server)
            let cases: [(String, String, String?)] = [
                (c.subscriberPath("2026-11-19", ["reportDate": nil]), "filter[reportDate]", nil),
                (c.subscriberPath("2026-11-31"), "filter[reportDate]", nil),
                (
                    c.subscriberPath("2026-11-19", ["version": "1_2"]), "filter[version]",
                    "latest version for this report is 1_3"
                ),
                (c.subscriberPath("2026-11-19", ["version": nil]), "filter[version]", "include the version"),
                (c.subscriberPath("2026-11-19", ["vendorNumber": "80000001"]), "filter[vendorNumber]", nil),
                (c.subscriberPath("2026-11-19", ["frequency": "WEEKLY"]), "filter[frequency]", nil),
                (c.subscriberPath("2026-11-19", ["reportType": nil]), "filter[reportType]", nil),
                (c.financePath("2027-01", detailed: false, ["regionCode": "Z1"]), "filter[regionCode]", nil),
                (c.financePath("2026-10-01", detailed: true), "filter[reportDate]", nil),
                (c.financePath("2027-13", detailed: true), "filter[reportDate]", nil),
            ]
            for (path, parameter, detail) in cases {
                expectError(try await c.get(path), 400, "PARAMETER_ERROR.INVALID", detail: detail, parameter: parameter)
            }
            expectError(
                try await c.get(c.subscriberPath("2026-11-19"), accept: "application/json"),
                406,
                "NOT_ACCEPTABLE"
            )
        }
    }

    @Test func aDailyReportIsAvailableFrom8AMPacificTheNextDayAndForAYear() async throws {
        let before = SimTime.parseRFC3339("2026-11-21T15:59:59Z")!  // 07:59:59 PST on 21 November
        try await withSimulator(subscriptions: 2000, now: before, configure: { $0.anchor = PopulationTests.now }) {
            let client = ReportClient($0)
            expectError(
                try await client.get(client.subscriberPath("2026-11-20")),
                404,
                "NOT_FOUND",
                detail: "not available yet"
            )
            expectError(
                try await client.get(client.subscriberPath("2026-12-01")),
                404,
                "NOT_FOUND",
                detail: "not available yet"
            )
            #expect(try await client.get(client.subscriberPath("2026-11-19")).status == 200)
            expectError(try await client.get(client.subscriberPath("2025-11-19")), 410, "GONE")
            #expect(try await client.get(client.subscriberPath("2025-11-21")).status != 410)
            // The fiscal month 2027-02 (1 to 28 November) waits for the end of 2027-03 (26 December).
            expectError(
                try await client.get(client.financePath("2027-02", detailed: false)),
                404,
                "NOT_FOUND",
                detail: "not available yet"
            )
        }
        let at8 = SimTime.parseRFC3339("2026-11-21T16:00:00Z")!
        try await withSimulator(subscriptions: 2000, now: at8, configure: { $0.anchor = PopulationTests.now }) {
            let client = ReportClient($0)
            let response = try await client.get(client.subscriberPath("2026-11-20"))
            #expect(response.status == 200)
        }
    }

    @Test func aDayWithoutEventsIsNotFoundWithApplesNoSalesDetail() async throws {
        try await withSimulator(subscriptions: 4) { server in
            let client = ReportClient(server)
            var day = ReportDay.containing(PopulationTests.now).adding(-2)
            while !SubscriberReportTruth.expectedKeys(server.population, date: day.iso).isEmpty { day = day.adding(-1) }
            let response = try await client.get(client.subscriberPath(day.iso))
            expectError(response, 404, "NOT_FOUND")
            #expect(ReportClient.error(response)?.detail == "There were no sales for the date specified.")
        }
    }

    @Test func theHourlyBudgetCountsDownAndThenAnswers429() async throws {
        try await withSimulator(subscriptions: 50, configure: { $0.reportsHourlyLimit = 3 }) { server in
            let client = ReportClient(server)
            let path = client.subscriberPath("2026-11-19")
            var remaining: [String] = []
            for _ in 0..<3 {
                let response = try await client.get(path)
                #expect(response.status != 429)
                remaining.append(response.header("X-Rate-Limit") ?? "")
            }
            #expect(remaining == (0..<3).map { "user-hour-lim:3;user-hour-rem:\(2 - $0);" })
            let refused = try await client.get(path)
            expectError(refused, 429, "RATE_LIMIT_EXCEEDED")
            #expect(refused.header("X-Rate-Limit") == "user-hour-lim:3;user-hour-rem:0;")
        }
    }
}
