import Reconciler
import Testing

/// The rules that tell a wrong shared secret (stop the run, exit 78) from a few foreign receipts (reject
/// those items, go on): the first 3 answers all 21004, or at least 10 and at least half of the last 50.
@Suite struct SharedSecretMismatchDetectorTests {
    /// Feeds `statuses`; returns the 1-based answer at which the detector turned systematic, or nil.
    static func systematicAt(_ statuses: [Int]) -> Int? {
        var detector = SharedSecretMismatchDetector()
        for (index, status) in statuses.enumerated() where detector.record(appleStatus: status) {
            return index + 1
        }
        return nil
    }

    @Test func theConstantsAreTheDocumentedOnes() {
        #expect(SharedSecretMismatchDetector.openingAnswers == 3)
        #expect(SharedSecretMismatchDetector.window == 50)
        #expect(SharedSecretMismatchDetector.minimumMismatches == 10)
    }

    @Test func theFirstThreeAnswersAll21004AreSystematic() {
        #expect(Self.systematicAt([21004, 21004, 21004]) == 3)
        var detector = SharedSecretMismatchDetector()
        detector.record(appleStatus: 21004)
        detector.record(appleStatus: 21004)
        #expect(!detector.isSystematic)
        let third = detector.record(appleStatus: 21004)
        #expect(third)
        #expect(detector.evidence == "the first 3 answers of the run were all 21004")
    }

    @Test func theOpeningRuleLooksAtTheFirstThreeAnswersOnly() {
        #expect(Self.systematicAt([21004, 21004]) == nil)
        #expect(Self.systematicAt([21004, 21004, 0]) == nil)
        #expect(Self.systematicAt([0, 21004, 21004, 21004]) == nil)
        #expect(Self.systematicAt([21004, 0, 21004, 21004, 21004]) == nil)
        // Any other status is an answer too (not only 0).
        #expect(Self.systematicAt([21004, 21004, 21010]) == nil)
        #expect(Self.systematicAt([21004, 21002, 21004]) == nil)
    }

    @Test func tenAndAtLeastHalfOfTheWindowAreSystematic() {
        // Below the floor of 10, however high the share.
        #expect(Self.systematicAt([0] + Array(repeating: 21004, count: 9)) == nil)
        #expect(Self.systematicAt([0] + Array(repeating: 21004, count: 10)) == 11)
        // Exactly half with exactly 10.
        #expect(Self.systematicAt(Array(repeating: 0, count: 10) + Array(repeating: 21004, count: 10)) == 20)
        // 10 of 21 is less than half; the next 21004 makes 11 of 22.
        #expect(Self.systematicAt(Array(repeating: 0, count: 11) + Array(repeating: 21004, count: 10)) == nil)
        #expect(Self.systematicAt(Array(repeating: 0, count: 11) + Array(repeating: 21004, count: 11)) == 22)
        // Interleaved after a good start: 10 of 21 is not enough, 11 of 22 is.
        let interleaved = [0, 0, 0] + Array(repeating: [21004, 0], count: 8).flatMap { $0 }
        #expect(Self.systematicAt(interleaved + [21004, 21004]) == nil)
        #expect(Self.systematicAt(interleaved + [21004, 21004, 21004]) == 22)
    }

    @Test func onlyTheLastFiftyAnswersCount() {
        // One 21004 in three never reaches half; its old answers slide out of the window as 21004s arrive.
        let pattern = Array(repeating: [0, 0, 21004], count: 20).flatMap { $0 }
        #expect(Self.systematicAt(pattern) == nil)
        // After the pattern the window (answers 11..60) holds 17 mismatches. Each new 21004 adds one and the
        // answer leaving the window takes one away when it was a 21004: 25 of 50 at the 12th new 21004.
        #expect(Self.systematicAt(pattern + Array(repeating: 21004, count: 11)) == nil)
        #expect(Self.systematicAt(pattern + Array(repeating: 21004, count: 12)) == 72)
        var detector = SharedSecretMismatchDetector()
        for status in pattern + Array(repeating: 21004, count: 12) { detector.record(appleStatus: status) }
        #expect(detector.evidence == "25 of the last 50 answers were 21004")
    }

    @Test func oneForeignReceiptAmongGoodAnswersIsNeverSystematic() {
        var statuses = Array(repeating: 0, count: 1000)
        for index in stride(from: 5, to: 1000, by: 7) { statuses[index] = 21004 }
        #expect(Self.systematicAt(statuses) == nil)
    }

    @Test func onceSystematicItStaysSo() {
        var detector = SharedSecretMismatchDetector()
        for _ in 0..<3 { detector.record(appleStatus: 21004) }
        for _ in 0..<500 {
            let systematic = detector.record(appleStatus: 0)
            #expect(systematic)
        }
        #expect(detector.isSystematic)
        #expect(detector.answers == 503)
    }
}
