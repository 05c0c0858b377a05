import AppStoreClient
import Foundation
import ReceiptDomain
import XCTest

/// What each App Store Server API answer means to a run (docs/decision-rules.md, "The App Store Server API").
final class ServerAPIErrorClassTests: XCTestCase {
    func testAppleDocumentedCodes() {
        func c(_ http: Int?, _ code: Int?, _ transport: TransportFailure? = nil) -> ServerAPIErrorClass {
            ServerAPIErrorClass.classify(httpStatus: http, errorCode: code, transport: transport)
        }
        XCTAssertEqual(c(200, nil), .success)
        XCTAssertEqual(c(401, nil), .unauthorized)
        XCTAssertEqual(c(429, 4_290_000), .rateLimited)
        XCTAssertEqual(c(404, 4_040_010), .notFound)
        for code in [4_040_002, 4_040_004, 4_040_006] { XCTAssertEqual(c(404, code), .retryable, "\(code)") }
        XCTAssertEqual(c(500, 5_000_001), .retryable)
        XCTAssertEqual(c(503, nil), .retryable)
        XCTAssertEqual(c(nil, nil, .connectionReset), .retryable)
        XCTAssertEqual(c(400, 4_000_006), .failed)
        XCTAssertEqual(c(403, nil), .failed)
    }

    func testRetryAfterIsUnixMillisecondsAsAppleSendsIt() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let later = ServerAPIClient.retryAfter("1800000002500", now: now)
        XCTAssertEqual(later?.timeIntervalSince(now) ?? 0, 2.5, accuracy: 0.001)
        // A time in the past means now; delta-seconds (a proxy's) still work; a year ahead is capped at a day.
        XCTAssertEqual(ServerAPIClient.retryAfter("1700000000000", now: now), now)
        XCTAssertEqual(ServerAPIClient.retryAfter("3", now: now)?.timeIntervalSince(now), 3)
        XCTAssertEqual(ServerAPIClient.retryAfter("1831536000000", now: now)?.timeIntervalSince(now), 86_400)
        XCTAssertNil(ServerAPIClient.retryAfter("soon", now: now))
    }
}
