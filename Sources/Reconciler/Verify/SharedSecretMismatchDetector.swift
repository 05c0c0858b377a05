/// Tells a wrong shared secret (every receipt answered 21004) from a few foreign receipts (one 21004 among
/// good answers is that receipt's problem, not the run's). Pure; fed by the pipeline with the Apple status of
/// every answer that finished an item (answers without a status, such as transport failures, are not fed).
///
/// Systematic, and from then on for the rest of the run, when:
/// - the first `openingAnswers` (3) answers of the run were all 21004; or
/// - over the last `window` (50) answers (all of them while fewer), at least `minimumMismatches` (10) and at
///   least half were 21004.
///
/// Until then a 21004 rejects its item (`shared_secret_mismatch`) and the run goes on; once systematic the
/// run stops as a configuration error (docs/decision-rules.md).
public struct SharedSecretMismatchDetector: Sendable, Equatable {
    /// Apple's "shared secret does not match".
    public static let mismatchStatus = 21004
    /// The opening rule: this many first answers, all 21004.
    public static let openingAnswers = 3
    /// The sliding rule's window: the last this many answers.
    public static let window = 50
    /// The sliding rule's floor: at least this many 21004s in the window (and at least half of it).
    public static let minimumMismatches = 10

    /// True once either rule held; it stays true.
    public private(set) var isSystematic = false
    /// Answers recorded so far.
    public private(set) var answers = 0
    /// Why it became systematic (counts only; nothing secret), nil while it is not.
    public private(set) var evidence: String?

    /// 21004 or not, for the last `window` answers (a ring).
    private var recent: [Bool] = []
    private var next = 0
    private var mismatchesInWindow = 0
    private var openingMismatches = 0

    public init() {}

    /// Records one answer's Apple status; returns `isSystematic` afterwards.
    @discardableResult
    public mutating func record(appleStatus: Int) -> Bool {
        let mismatch = appleStatus == Self.mismatchStatus
        answers += 1
        if answers <= Self.openingAnswers, mismatch { openingMismatches += 1 }
        if recent.count < Self.window {
            recent.append(mismatch)
        } else {
            if recent[next] { mismatchesInWindow -= 1 }
            recent[next] = mismatch
            next = (next + 1) % Self.window
        }
        if mismatch { mismatchesInWindow += 1 }
        guard !isSystematic else { return true }
        if answers == Self.openingAnswers, openingMismatches == Self.openingAnswers {
            isSystematic = true
            evidence = "the first \(Self.openingAnswers) answers of the run were all 21004"
        } else if mismatchesInWindow >= Self.minimumMismatches, mismatchesInWindow * 2 >= recent.count {
            isSystematic = true
            evidence = "\(mismatchesInWindow) of the last \(recent.count) answers were 21004"
        }
        return isSystematic
    }
}
