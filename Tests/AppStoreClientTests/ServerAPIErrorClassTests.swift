import AppStoreClient
import Foundation
import ReceiptDomain
import Testing

/// What each App Store Server API answer means to a run (docs/decision-rules.md, "The App Store Server API").
@Suite struct ServerAPIErrorClassTests {
    @Test func appleDocumentedCodes() {
        func c(_ http: Int?, _ code: Int?, _ transport: TransportFailure? = nil) -> ServerAPIErrorClass {
            ServerAPIErrorClass.classify(httpStatus: http, errorCode: code, transport: transport)
        }
        #expect(c(200, nil) == .success)
        #expect(c(401, nil) == .unauthorized)
        #expect(c(429, 4_290_000) == .rateLimited)
        #expect(c(404, 4_040_010) == .notFound)
        for code in [4_040_002, 4_040_004, 4_040_006] { #expect(c(404, code) == .retryable, "\(code)") }
        #expect(c(500, 5_000_001) == .retryable)
        #expect(c(503, nil) == .retryable)
        #expect(c(nil, nil, .connectionReset) == .retryable)
        #expect(c(400, 4_000_006) == .failed)
        #expect(c(403, nil) == .failed)
    }

    @Test func retryAfterIsUnixMillisecondsAsAppleSendsIt() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let later = ServerAPIClient.retryAfter("1800000002500", now: now)
        #expect(abs((later?.timeIntervalSince(now) ?? 0) - (2.5)) <= 0.001)
        // A time in the past means now; delta-seconds (a proxy's) still work; a year ahead is capped at a day.
        #expect(ServerAPIClient.retryAfter("1700000000000", now: now) == now)
        #expect(ServerAPIClient.retryAfter("3", now: now)?.timeIntervalSince(now) == 3)
        #expect(ServerAPIClient.retryAfter("1831536000000", now: now)?.timeIntervalSince(now) == 86_400)
        #expect(ServerAPIClient.retryAfter("soon", now: now) == nil)
    }
}
