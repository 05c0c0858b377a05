import AppleReports
import Foundation
import Reconciler

/// `demo --tie-out`'s check (docs/tie-out.md, "The demo"): a tie-out against what the simulator knows it put in its
/// world (`server-api/sales-truth.jsonl`, docs/simulator.md "Sales truth"), never against the tie-out's own rules.
/// Every check must hold for the demo to pass:
///
/// - **lost orders**: the events of `--lost-orders` customers in the window are exactly the tie-out's "Apple only"
///   list (day, Subscription Apple ID, country, currency, amount);
/// - **nothing else unexplained**: no ledger-only event, and per currency the daily view's unexplained money is the
///   lost orders' and nothing more (ledger less Apple: minus what the lost customers paid); in the monthly view the
///   proceeds of the lost orders sold in the month, nothing more;
/// - **family sharing**: per currency, the ledger money of the `family_sharing` rows is the family copies' the world
///   holds in the window;
/// - **tax**, **commission tier**, **settlement timing** and the causes the world does not plant: see
///   `TieOutTruthComparison+Proceeds.swift`.
public struct TieOutTruthComparison {
    /// One check: what the truth implies, what the tie-out says.
    public struct Check: Sendable {
        public var name: String
        public var expected: String
        public var actual: String
        public var holds: Bool
    }

    public struct Report: Sendable {
        public var checks: [Check]
        public var matches: Bool { checks.allSatisfy(\.holds) }

        /// `tie-out vs the simulator's truth: 9/9 checks hold`, then a line per check.
        public func lines() -> [String] {
            ["tie-out vs the simulator's truth: \(checks.filter(\.holds).count)/\(checks.count) checks hold"]
                + checks.map { "  \($0.holds ? "ok  " : "FAIL") \($0.name): expected \($0.expected), got \($0.actual)" }
        }
    }

    /// One line of sales-truth.jsonl.
    struct TruthEvent: Decodable {
        var kind: String
        var pacificDay: String
        var subscriptionAppleId: String
        var country: String
        var currency: String
        var customerPrice: Int64
        var proceeds: Int64?
        var taxPercent: Int64?
        var settlementDay: String?
        var lostOrder: Bool?
        var afterOneYear: Bool?

        enum CodingKeys: String, CodingKey {
            case kind, country, currency, proceeds
            case pacificDay = "pacific_day"
            case subscriptionAppleId = "subscription_apple_id"
            case customerPrice = "customer_price"
            case taxPercent = "tax_percent"
            case settlementDay = "settlement_day"
            case lostOrder = "lost_order"
            case afterOneYear = "after_one_year"
        }

        var isLost: Bool { lostOrder == true && customerPrice != 0 }
        /// A purchase or refund of money that the app's ledger holds too (not a lost order, not a family copy).
        var isLedgerMoney: Bool { kind != "family_shared" && lostOrder != true && customerPrice != 0 }
    }

    public let result: TieOutResult
    let events: [TruthEvent]

    /// Reads the truth file; the tie-out's window decides which of its events count.
    public init(result: TieOutResult, truthFile: String) throws {
        self.result = result
        let decoder = JSONDecoder()
        events = try String(contentsOfFile: truthFile, encoding: .utf8).split(separator: "\n").map {
            try decoder.decode(TruthEvent.self, from: Data($0.utf8))
        }
    }

    public func compare() -> Report {
        Report(checks: [
            lostOrders(), ledgerOnly(), unexplainedDaily(), unexplainedMonthly(), familySharing(), tax(),
            commissionTier(), settlementTiming(), unplanted(),
        ])
    }

    /// The window's events of the truth.
    var inWindow: [TruthEvent] {
        let from = result.from.description
        let to = result.to.description
        return events.filter { $0.pacificDay >= from && $0.pacificDay <= to }
    }

    func lostOrders() -> Check {
        let expected = inWindow.filter(\.isLost).map {
            "\($0.pacificDay)|\($0.subscriptionAppleId)|\($0.country)|\($0.currency)|\($0.customerPrice)"
        }.sorted()
        let actual = result.appleOnly.map {
            "\($0.day)|\($0.subscriptionAppleId)|\($0.country)|\($0.currency)|\($0.amount)"
        }.sorted()
        let missing = Self.difference(expected, actual)
        let extra = Self.difference(actual, expected)
        return Check(
            name: "lost orders listed (Apple only)",
            expected: "\(expected.count)",
            actual: "\(actual.count)" + Self.sample("missing", missing) + Self.sample("not lost", extra),
            holds: missing.isEmpty && extra.isEmpty
        )
    }

    func ledgerOnly() -> Check {
        Check(
            name: "ledger money Apple never reported",
            expected: "0 events",
            actual: "\(result.ledgerOnly.count) events"
                + Self.sample("first", result.ledgerOnly.prefix(3).map { "\($0.transactionId) \($0.day)" }),
            holds: result.ledgerOnly.isEmpty
        )
    }

    func unexplainedDaily() -> Check {
        var expected: [String: Int64] = [:]
        for event in inWindow where event.isLost { expected[event.currency, default: 0] -= event.customerPrice }
        let actual = sums(view: .daily, measure: .customerPrice, cause: .unexplained, \.difference)
        return Check(
            name: "daily unexplained money = the lost orders' (per currency, ledger less Apple)",
            expected: Self.text(expected),
            actual: Self.text(actual),
            holds: Self.same(expected, actual)
        )
    }

    func unexplainedMonthly() -> Check {
        var expected: [String: Int64] = [:]
        let compared = Set(result.fiscalMonthsCompared.map(\.name))
        // Every lost sale of a compared month, whenever Apple settled it: what Apple settles in the next month is
        // settlement timing on top of it, checked by `settlementTiming`.
        for event in inWindow where event.isLost && compared.contains(Self.fiscalMonth(event.pacificDay)) {
            expected[event.currency, default: 0] -= event.proceeds ?? 0
        }
        let actual = sums(view: .monthly, measure: .partnerShare, cause: .unexplained, \.difference)
        return Check(
            name: "monthly unexplained partner share = the lost orders' sold in the month",
            expected: Self.text(expected),
            actual: Self.text(actual),
            holds: Self.same(expected, actual)
        )
    }

    func familySharing() -> Check {
        var expected: [String: Int64] = [:]
        for event in inWindow where event.kind == "family_shared" && event.customerPrice > 0 {
            expected[event.currency, default: 0] += event.customerPrice
        }
        let actual = sums(view: .daily, measure: .customerPrice, cause: .familySharing) { $0.ledgerAmount }
        return Check(
            name: "family sharing = the family copies' money (per currency)",
            expected: Self.text(expected),
            actual: Self.text(actual),
            holds: Self.same(expected, actual)
        )
    }

    /// Per currency (or per `by` of the row), `value` of the rows of a view, measure and cause, zeros left out.
    func sums(
        view: TieOutRow.View,
        measure: TieOutRow.Measure,
        cause: TieOutCause,
        by: (TieOutRow.Key) -> String = \.currency,
        _ value: (TieOutRow) -> Int64?
    ) -> [String: Int64] {
        var sums: [String: Int64] = [:]
        for row in result.rows where row.key.view == view && row.key.measure == measure && row.key.cause == cause {
            sums[by(row.key), default: 0] += value(row) ?? 0
        }
        return sums.filter { $0.value != 0 }
    }

    /// The fiscal month (`YYYY-MM`) of a Pacific day `YYYY-MM-DD`; empty for a day that does not read.
    static func fiscalMonth(_ day: String) -> String {
        PacificDay(day).map { AppleFiscalMonth(containing: $0).name } ?? ""
    }

    static func same(_ a: [String: Int64], _ b: [String: Int64]) -> Bool {
        a.filter { $0.value != 0 } == b.filter { $0.value != 0 }
    }

    /// `USD -12990, JPY -1500000` in milliunits, or `none`.
    static func text(_ sums: [String: Int64]) -> String {
        let kept = sums.filter { $0.value != 0 }.sorted { $0.key < $1.key }
        return kept.isEmpty ? "none" : kept.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
    }

    /// The elements of `a` not in `b`, as multisets.
    static func difference(_ a: [String], _ b: [String]) -> [String] {
        var left = Dictionary(b.map { ($0, 1) }, uniquingKeysWith: +)
        return a.filter { key in
            guard let n = left[key], n > 0 else { return true }
            left[key] = n - 1
            return false
        }
    }

    static func sample(_ label: String, _ items: [String]) -> String {
        items.isEmpty ? "" : " (\(label): \(items.prefix(3).joined(separator: "; "))\(items.count > 3 ? "; ..." : ""))"
    }
}
