import AppleReports
import Foundation

/// Which ledger event each Subscriber report event was matched with, and how (docs/tie-out.md, "Matching").
///
/// A deterministic greedy match, in passes, of events with the same kind (sale or refund), product, country,
/// currency and customer amount; family-shared ledger events never match (Apple does not bill them). Apple's events
/// are taken in (day, file, line) order; each takes the first unmatched ledger event in (day, instant, transaction
/// id) order that its pass allows:
///
/// Ledger events of days no imported Subscriber report covers take part in pass 3 only.
///
/// 1. **same day**: the ledger event's Pacific day is Apple's day (`matched`);
/// 2. **neighbouring day**: one day before, else one day after, when the ledger's instant lies within
///    `neighbourHours` of the Pacific midnight between the two days: an instant near midnight, or a day read in UTC
///    instead of Pacific time (7 or 8 hours) (`timing`);
/// 3. **refund by purchase**: a refund whose ledger refund has the purchase day Apple's row names (`Purchase Date`),
///    booked on any other day (`refund_other_period`);
/// 4. **reversed refund**: a refund left unmatched, with a ledger transaction of the same product, country, currency
///    and purchase day, priced at least the refund, whose refund Apple reversed on or after the refund's day
///    (`TieOutReversal`, in (reversal instant, transaction id) order; `refund_reversed`).
public struct TieOutMatching: Sendable, Equatable {
    public enum Kind: String, Sendable {
        case sameDay, neighbouringDay, refundByPurchase
    }

    /// For each Apple event (by index), its ledger event's index and the pass that paired them.
    public private(set) var ledgerOfApple: [Int: (index: Int, kind: Kind)] = [:]
    /// For each ledger event (by index), its Apple event's index.
    public private(set) var appleOfLedger: [Int: Int] = [:]
    /// For each Apple refund event (by index) explained by a reversal, the reversal's index (pass 4).
    public private(set) var reversalOfApple: [Int: Int] = [:]

    public static func == (lhs: TieOutMatching, rhs: TieOutMatching) -> Bool {
        lhs.appleOfLedger == rhs.appleOfLedger && lhs.reversalOfApple == rhs.reversalOfApple
            && lhs.ledgerOfApple.mapValues { "\($0.index)/\($0.kind)" }
                == rhs.ledgerOfApple.mapValues { "\($0.index)/\($0.kind)" }
    }

    public init(
        ledger: [TieOutLedgerEvent],
        apple: [TieOutAppleEvent],
        reversals: [TieOutReversal] = [],
        uncovered: Set<PacificDay> = []
    ) {
        let (byDay, byPurchase) = Self.candidates(ledger, uncovered: uncovered)
        let appleOrder = apple.indices.sorted {
            (apple[$0].day, apple[$0].fileName, apple[$0].line) < (apple[$1].day, apple[$1].fileName, apple[$1].line)
        }
        matchLedger(ledger, apple: apple, in: appleOrder, byDay: byDay, byPurchase: byPurchase)
        matchReversals(reversals, apple: apple, in: appleOrder)
    }

    /// Ledger event indices by match key, then by a day's number.
    private typealias Candidates = [String: [Int64: [Int]]]

    /// The ledger's candidates per key, by Pacific day (covered days only) and, for refunds, by purchase day; each
    /// list in (instant, transaction id) order, family-shared events left out.
    private static func candidates(
        _ ledger: [TieOutLedgerEvent],
        uncovered: Set<PacificDay>
    ) -> (byDay: Candidates, byPurchase: Candidates) {
        var byDay: Candidates = [:]
        var byPurchase: Candidates = [:]
        let ledgerOrder = ledger.indices.sorted {
            (ledger[$0].instant, ledger[$0].transactionId) < (ledger[$1].instant, ledger[$1].transactionId)
        }
        for index in ledgerOrder where !ledger[index].familyShared {
            let event = ledger[index]
            let key = Self.key(event.kind == .refund, event.productId, event.country, event.currency, event.amount)
            // A day no Subscriber report covers has no Apple events of its own to match first: its ledger events
            // would take a neighbouring day's unrelated ones.
            if !uncovered.contains(event.day) { byDay[key, default: [:]][event.day.days, default: []].append(index) }
            if event.kind == .refund {
                byPurchase[key, default: [:]][event.purchaseDay.days, default: []].append(index)
            }
        }
        return (byDay, byPurchase)
    }

    /// Passes 1 to 3: each pass gives every Apple event still unmatched, in `appleOrder`, the first ledger candidate
    /// not yet taken that the pass allows.
    private mutating func matchLedger(
        _ ledger: [TieOutLedgerEvent],
        apple: [TieOutAppleEvent],
        in appleOrder: [Int],
        byDay: Candidates,
        byPurchase: Candidates
    ) {
        var taken = Set<Int>()
        func take(_ candidates: [Int]?, near midnight: Date? = nil) -> Int? {
            candidates?.first { index in
                guard !taken.contains(index) else { return false }
                guard let midnight else { return true }
                return abs(ledger[index].instant.timeIntervalSince(midnight)) < Self.neighbourHours * 3600
            }
        }
        let passes: [(Kind, (TieOutAppleEvent, [Int64: [Int]]?, [Int64: [Int]]?) -> Int?)] = [
            (.sameDay, { event, days, _ in take(days?[event.day.days]) }),
            (
                .neighbouringDay,
                { event, days, _ in
                    take(days?[event.day.days - 1], near: event.day.start)
                        ?? take(days?[event.day.days + 1], near: event.day.next.start)
                }
            ),
            (
                .refundByPurchase,
                { event, _, purchases in
                    guard event.isRefund, let day = event.purchaseDay else { return nil }
                    return take(purchases?[day.days])
                }
            ),
        ]
        for (kind, pass) in passes {
            for index in appleOrder where ledgerOfApple[index] == nil {
                let event = apple[index]
                guard let productId = event.productId else { continue }
                let key = Self.key(event.isRefund, productId, event.country, event.currency, event.amount)
                guard let found = pass(event, byDay[key], byPurchase[key]) else { continue }
                taken.insert(found)
                ledgerOfApple[index] = (found, kind)
                appleOfLedger[found] = index
            }
        }
    }

    /// Pass 4: each Apple refund still unmatched, in `appleOrder`, takes the first reversal not yet taken, in
    /// (reversal instant, transaction id) order, that can explain it.
    private mutating func matchReversals(_ reversals: [TieOutReversal], apple: [TieOutAppleEvent], in appleOrder: [Int])
    {
        let reversalOrder = reversals.indices.sorted {
            (reversals[$0].reversedAt, reversals[$0].transactionId) < (
                reversals[$1].reversedAt, reversals[$1].transactionId
            )
        }
        var reversed = Set<Int>()
        for index in appleOrder where ledgerOfApple[index] == nil && apple[index].isRefund {
            let event = apple[index]
            guard let productId = event.productId, let purchaseDay = event.purchaseDay else { continue }
            let found = reversalOrder.first {
                let reversal = reversals[$0]
                return !reversed.contains($0) && reversal.productId == productId && reversal.country == event.country
                    && reversal.currency == event.currency && reversal.purchaseDay == purchaseDay
                    && reversal.price >= abs(event.amount) && reversal.reversedAt >= event.day.start
            }
            guard let found else { continue }
            reversed.insert(found)
            reversalOfApple[index] = found
        }
    }

    /// How near the Pacific midnight between two days a ledger instant must be for a neighbouring-day match.
    public static let neighbourHours: Double = 9

    static func key(_ refund: Bool, _ product: String, _ country: String, _ currency: String, _ amount: Int64) -> String
    {
        "\(refund ? "R" : "S")\u{0}\(product)\u{0}\(country)\u{0}\(currency)\u{0}\(amount)"
    }
}
