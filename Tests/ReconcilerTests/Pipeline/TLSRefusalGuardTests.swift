import Foundation
import Testing

@testable import Reconciler

/// The TLS refusal guard alone (docs/operations.md, "HTTPS to Apple"): refusals in a row stop the run, an
/// HTTP answer resets the count, other transport failures neither count nor reset it.
@Suite struct TLSRefusalGuardTests {
    static let request = SourceRequest(budget: RateBudget(name: "apple", rate: 1), environment: .production)
    static let refusal =
        "the server's certificate is not trusted (self-signed, or its CA is not in the trust store) "
        + "[untrusted_certificate]: SSL certificate problem: self-signed certificate"

    static func refused() -> SourceAnswer {
        SourceAnswer(
            request: request,
            httpStatus: nil,
            appleStatus: nil,
            transportFailure: "TLS refused: \(refusal)",
            tlsRefusal: refusal,
            throttled: false
        )
    }

    static func answered() -> SourceAnswer {
        SourceAnswer(request: request, httpStatus: 200, appleStatus: 0, transportFailure: nil, throttled: false)
    }

    static func timedOut() -> SourceAnswer {
        SourceAnswer(request: request, httpStatus: nil, appleStatus: nil, transportFailure: "timeout", throttled: false)
    }

    /// The guard under test (a class, so `#expect` can call its mutating method).
    final class Subject {
        var guardian = TLSRefusalGuard()
        func record(_ answer: SourceAnswer, host: String) -> Bool { guardian.record(answer, host: host) }
        var isTripped: Bool { guardian.isTripped }
        var consecutiveRefusals: Int { guardian.consecutiveRefusals }
        var message: String { guardian.message }
    }

    @Test func threeRefusalsInARowTripItOnceNamingTheHostAndTheReason() {
        let guardian = Subject()
        #expect(!guardian.record(Self.refused(), host: "buy.itunes.apple.com"))
        #expect(!guardian.record(Self.timedOut(), host: "buy.itunes.apple.com"))
        #expect(!guardian.record(Self.refused(), host: "buy.itunes.apple.com"))
        #expect(guardian.record(Self.refused(), host: "buy.itunes.apple.com"))
        #expect(guardian.isTripped)
        #expect(!guardian.record(Self.refused(), host: "buy.itunes.apple.com"), "reported once")
        let message = guardian.message
        #expect(message.hasPrefix("TLS refused by buy.itunes.apple.com: the server's certificate is not trusted"))
        #expect(message.contains("self-signed certificate"))
        #expect(message.contains("(3 requests in a row)"))
        #expect(message.contains("--ca-file") && message.contains("APPLE_CA_FILE"))
    }

    @Test func anHTTPAnswerBetweenRefusalsResetsTheCount() {
        let guardian = Subject()
        for _ in 0..<10 {
            #expect(!guardian.record(Self.refused(), host: "h"))
            #expect(!guardian.record(Self.refused(), host: "h"))
            #expect(!guardian.record(Self.answered(), host: "h"))
        }
        #expect(guardian.consecutiveRefusals == 0)
        #expect(!guardian.isTripped)
    }
}
