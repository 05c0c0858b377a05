import AppleReports
import CivilTime
import Foundation
import Reconciler
import Testing

/// The attribution of every difference to its cause (docs/tie-out.md, "Causes", "Matching"), each at a boundary:
/// 23:59 and 00:01 Pacific, the clock changes of 2026-03-08 and 2026-11-01, a fiscal month's end.
@Suite struct TieOutComparisonTests {
    static func instant(_ text: String) -> Date { RFC3339.parse(text)! }
    static func day(_ text: String) -> PacificDay { PacificDay(text)! }

    /// A ledger sale (or refund) of 9.99 USD in the US, proceeds estimated at `rate`.
    static func ledger(
        _ id: String,
        _ at: String,
        amount: Int64 = 9990,
        kind: TieOutLedgerEvent.Kind = .sale,
        currency: String = "USD",
        country: String = "US",
        rate: Int64 = 30000,
        family: Bool = false,
        purchased: String? = nil
    ) -> TieOutLedgerEvent {
        let proceeds = CommissionPolicy.proceeds(of: abs(amount), rate: rate, currency: currency)
        return TieOutLedgerEvent(
            transactionId: id,
            kind: kind,
            instant: instant(at),
            productId: "pro.monthly",
            country: country,
            currency: currency,
            amount: amount,
            proceeds: amount < 0 ? -proceeds : proceeds,
            commissionRate: rate,
            familyShared: family,
            purchaseDay: purchased.map(day)
        )
    }

    /// A Subscriber report event of 9.99 USD in the US with proceeds 6.99.
    static func apple(
        _ line: Int,
        _ on: String,
        amount: Int64 = 9990,
        proceeds: Int64 = 6990,
        currency: String = "USD",
        proceedsCurrency: String? = nil,
        country: String = "US",
        appleId: String = "6400000001",
        mapped: Bool = true,
        afterOneYear: Bool = false,
        purchased: String? = nil
    ) -> TieOutAppleEvent {
        TieOutAppleEvent(
            fileName: "subscriber.txt",
            line: line,
            day: day(on),
            subscriptionAppleId: appleId,
            productId: mapped ? "pro.monthly" : nil,
            country: country,
            currency: currency,
            amount: amount,
            proceeds: proceeds,
            proceedsCurrency: proceedsCurrency,
            afterOneYear: afterOneYear,
            purchaseDay: purchased.map(day),
            subscriberId: "70000\(line)"
        )
    }

    static func compare(
        _ from: String,
        _ to: String,
        ledger: [TieOutLedgerEvent],
        apple: [TieOutAppleEvent],
        months: [AppleFiscalMonth] = [],
        shares: [TieOutPartnerShare] = [],
        commission: CommissionPolicy = .standard
    ) -> TieOutResult {
        TieOutComparison.compare(
            TieOutInput(
                from: day(from),
                to: day(to),
                ledger: ledger,
                apple: apple,
                fiscalMonths: months,
                partnerShares: shares,
                commission: commission
            )
        )
    }

    /// The difference per cause of the rows of one view and measure (every day and key).
    static func causes(
        _ result: TieOutResult,
        _ view: TieOutRow.View,
        _ measure: TieOutRow.Measure
    ) -> [TieOutCause: Int64] {
        var out: [TieOutCause: Int64] = [:]
        for row in result.rows where row.key.view == view && row.key.measure == measure {
            guard let difference = row.difference, difference != 0 else { continue }
            out[row.key.cause, default: 0] += difference
        }
        return out
    }

    /// Every total's rows add up: ledger less Apple is the sum of the differences.
    static func expectTotalsAddUp(_ result: TieOutResult, sourceLocation: SourceLocation = #_sourceLocation) {
        for total in result.totals where total.currency == total.appleCurrency {
            #expect(
                total.difference == total.ledgerAmount - total.appleAmount,
                "\(total)",
                sourceLocation: sourceLocation
            )
            #expect(total.byCause.values.reduce(0, +) == total.difference, sourceLocation: sourceLocation)
        }
    }

    @Test func aPurchaseAt2359PacificIsTheDayBeforeAndAt0001TheDayItself() {
        // 2026-11-20T07:59Z is 23:59 PST on 19 November; 08:01Z is 00:01 on the 20th.
        let result = Self.compare(
            "2026-11-19",
            "2026-11-20",
            ledger: [Self.ledger("late", "2026-11-20T07:59:00Z"), Self.ledger("early", "2026-11-20T08:01:00Z")],
            apple: [Self.apple(2, "2026-11-20"), Self.apple(3, "2026-11-20")]
        )
        // "early" matches on the 20th; "late" is the 19th in the ledger and Apple's second row of the 20th.
        let price = result.rows.filter { $0.key.measure == .customerPrice }
        let matched = price.filter { $0.key.cause == .matched }
        #expect(matched.map(\.key.period) == ["2026-11-20"])
        #expect(matched.first?.ledgerUnits == 1)
        let timing = price.filter { $0.key.cause == .timing }
        #expect(timing.map(\.key.period) == ["2026-11-19", "2026-11-20"])
        #expect(timing.map(\.difference) == [9990, -9990])
        #expect(timing.first?.detail.contains("late") == true)
        #expect(result.appleOnly.isEmpty && result.ledgerOnly.isEmpty)
        #expect(Self.causes(result, .daily, .customerPrice) == [.timing: 0])  // moved a day, netted over the two
        Self.expectTotalsAddUp(result)
    }

    @Test func onTheClockChangeDaysMidnightPacificMovesAnHourInUTC() {
        // 2026-03-08: PDT from 10:00Z, so the 9th starts at 07:00Z; 2026-11-01: PST from 09:00Z, so the 2nd starts at
        // 08:00Z. Each purchase falls on the Pacific day Apple books it, none is timing.
        let result = Self.compare(
            "2026-03-08",
            "2026-11-02",
            ledger: [
                Self.ledger("mar8-late", "2026-03-09T06:59:00Z"),  // 23:59 PDT on 8 March
                Self.ledger("mar9-early", "2026-03-09T07:01:00Z"),  // 00:01 PDT on 9 March
                Self.ledger("nov1-early", "2026-11-01T07:01:00Z"),  // 00:01 PDT on 1 November
                Self.ledger("nov1-late", "2026-11-02T07:59:00Z"),  // 23:59 PST on 1 November
                Self.ledger("nov2-early", "2026-11-02T08:01:00Z"),  // 00:01 PST on 2 November
            ],
            apple: [
                Self.apple(2, "2026-03-08"), Self.apple(3, "2026-03-09"), Self.apple(4, "2026-11-01"),
                Self.apple(5, "2026-11-01"), Self.apple(6, "2026-11-02"),
            ]
        )
        let matched = result.rows.filter { $0.key.measure == .customerPrice && $0.key.cause == .matched }
        #expect(matched.map(\.key.period) == ["2026-03-08", "2026-03-09", "2026-11-01", "2026-11-02"])
        #expect(matched.map(\.ledgerUnits) == [1, 1, 2, 1])
        #expect(Self.causes(result, .daily, .customerPrice).isEmpty)
        #expect(result.headline.first?.matchedShare == 1)
    }

    @Test func aPurchaseOnAFiscalMonthsLastNightThatAppleBooksNextMonthIsTimingInBothMonths() throws {
        // Fiscal October 2026 ends on Saturday 31 October; 2026-11-01T06:59Z is 23:59 PDT on the 31st.
        let october = try #require(AppleFiscalMonth(named: "2026-10"))
        let november = october.next
        #expect(october.end == Self.day("2026-10-31") && november.start == Self.day("2026-11-01"))
        let shares = [
            TieOutPartnerShare(
                fiscalMonth: november,
                productId: "pro.monthly",
                country: "US",
                currency: "USD",
                quantity: 1,
                amount: 6990
            )
        ]
        let result = Self.compare(
            "2026-11-01",
            "2026-11-28",
            ledger: [Self.ledger("boundary", "2026-11-01T06:59:00Z")],
            apple: [Self.apple(2, "2026-11-01")],
            months: [november],
            shares: shares
        )
        // Daily: only Apple's side is in the window, moved from the 31st.
        #expect(Self.causes(result, .daily, .customerPrice) == [.timing: -9990])
        // Monthly: Apple's 6.99 in November is the ledger's October estimate, and the Financial report agrees with the
        // Subscriber report.
        #expect(Self.causes(result, .monthly, .partnerShare) == [.timing: -6990])
        #expect(result.ledgerOnly.isEmpty && result.appleOnly.isEmpty)
        Self.expectTotalsAddUp(result)
    }

    @Test func aRefundBookedWeeksApartIsRefundOtherPeriodAndANeighbouringDayIsTiming() {
        let result = Self.compare(
            "2026-11-01",
            "2026-11-30",
            ledger: [
                Self.ledger("sold", "2026-10-20T18:00:00Z"),
                Self.ledger("sold", "2026-11-10T18:00:00Z", amount: -9990, kind: .refund, purchased: "2026-10-20"),
                Self.ledger("other", "2026-11-16T05:00:00Z", amount: -9990, kind: .refund, purchased: "2026-10-25"),
            ],
            apple: [
                Self.apple(2, "2026-11-20", amount: -9990, proceeds: -6990, purchased: "2026-10-20"),
                Self.apple(3, "2026-11-16", amount: -9990, proceeds: -6990, purchased: "2026-10-25"),
            ]
        )
        let price = result.rows.filter { $0.key.measure == .customerPrice && $0.key.cause != .matched }
        #expect(price.map(\.key.cause) == [.refundOtherPeriod, .timing, .timing, .refundOtherPeriod])
        #expect(price.map(\.key.period) == ["2026-11-10", "2026-11-15", "2026-11-16", "2026-11-20"])
        #expect(price.map(\.difference) == [-9990, -9990, 9990, 9990])
        #expect(price.map(\.ledgerUnits) == [-1, -1, 0, 0])
        #expect(result.ledgerOnly.isEmpty && result.appleOnly.isEmpty)
        // The sale of 20 October is before the window: no row.
        #expect(!result.rows.contains { $0.key.period == "2026-10-20" })
        Self.expectTotalsAddUp(result)
    }

    @Test func proceedsBelowPriceLessCommissionAreTaxAndAbove70PercentIsTheCommissionTier() {
        let result = Self.compare(
            "2026-11-20",
            "2026-11-20",
            ledger: [
                Self.ledger("taxed", "2026-11-20T18:00:00Z", country: "GB"),
                Self.ledger("year2", "2026-11-20T18:01:00Z"),
                Self.ledger("sbp", "2026-11-20T18:02:00Z", country: "CA"),
                Self.ledger("rounded", "2026-11-20T18:03:00Z", country: "MX"),
            ],
            apple: [
                // 9.99 incl. 20% VAT: 8.325 x 70% = 5.83.
                Self.apple(2, "2026-11-20", proceeds: 5830, country: "GB"),
                // Rate After One Year: 85% = 8.49.
                Self.apple(3, "2026-11-20", proceeds: 8490, afterOneYear: true),
                // 85% without a reason (Small Business Program), less 5% tax: 8.08.
                Self.apple(4, "2026-11-20", proceeds: 8080, country: "CA"),
                // A cent of rounding.
                Self.apple(5, "2026-11-20", proceeds: 6980, country: "MX"),
            ]
        )
        #expect(Self.causes(result, .daily, .customerPrice).isEmpty)
        let proceeds = result.rows.filter { $0.key.measure == .proceeds && ($0.difference ?? 0) != 0 }
        func difference(_ country: String, _ cause: TieOutCause) -> Int64? {
            proceeds.first { $0.key.country == country && $0.key.cause == cause }?.difference
        }
        #expect(difference("GB", .tax) == 1160)
        #expect(difference("US", .commissionTier) == -1500)
        #expect(difference("US", .tax) == nil)
        #expect(difference("CA", .commissionTier) == -1500)
        #expect(difference("CA", .tax) == 410)
        #expect(difference("MX", .matched) == 10)
        #expect(!proceeds.contains { $0.key.cause == .unexplained })
        // With the Small Business Program's estimate, the 85% rows carry no tier.
        let sbp = Self.compare(
            "2026-11-20",
            "2026-11-20",
            ledger: [Self.ledger("sbp", "2026-11-20T18:02:00Z", rate: 15000)],
            apple: [Self.apple(4, "2026-11-20", proceeds: 8490)],
            commission: .smallBusiness
        )
        #expect(Self.causes(sbp, .daily, .proceeds).isEmpty)
        Self.expectTotalsAddUp(result)
    }

    @Test func familySharingExchangeRateAndBothKindsOfUnexplainedMoney() throws {
        let result = Self.compare(
            "2026-11-20",
            "2026-11-20",
            ledger: [
                Self.ledger("family", "2026-11-20T18:00:00Z", family: true),
                Self.ledger("ledger-only", "2026-11-20T19:00:00Z", amount: 4990),
                Self.ledger("chf", "2026-11-20T20:00:00Z", amount: 10000, currency: "CHF", country: "CH"),
            ],
            apple: [
                Self.apple(2, "2026-11-20", amount: 19990, proceeds: 13990),  // a lost order
                Self.apple(
                    3,
                    "2026-11-20",
                    amount: 10000,
                    proceeds: 7600,
                    currency: "CHF",
                    proceedsCurrency: "USD",
                    country: "CH"
                ),
                Self.apple(4, "2026-11-20", appleId: "6499999999", mapped: false),
            ]
        )
        let price = Self.causes(result, .daily, .customerPrice)
        #expect(price[.familySharing] == 9990)
        #expect(price[.unexplained] == 4990 - 19990 - 9990)
        #expect(result.ledgerOnly.map(\.transactionId) == ["ledger-only"])
        #expect(result.appleOnly.map(\.line) == [2, 4])
        #expect(TieOutComparison.lostOrderText(result.appleOnly[1]).contains("6499999999 maps to no product"))
        #expect(result.rows.contains { $0.key.productId == "apple_id:6499999999" && $0.key.cause == .unexplained })
        let fx = result.rows.filter { $0.key.cause == .exchangeRate }
        #expect(fx.count == 1)
        #expect(fx.first?.key.currency == "CHF" && fx.first?.key.appleCurrency == "USD")
        #expect(fx.first?.difference == nil)
        #expect(fx.first?.appleAmount == 7600)
        let usd = try #require(result.headline.first { $0.currency == "USD" })
        #expect(usd.matchedMoney == 0)
        #expect(usd.unexplainedMoney == 4990 + 19990 + 9990)
        Self.expectTotalsAddUp(result)
    }

    @Test func theMonthlyViewSplitsTheLedgersProceedsAgainstThePartnerShare() throws {
        let november = try #require(AppleFiscalMonth(named: "2026-11"))
        let shares = [
            // Apple's Financial report: two units, 6.99 + 5.83 ... but 0.50 less than the Subscriber report says.
            TieOutPartnerShare(
                fiscalMonth: november,
                productId: "pro.monthly",
                country: "US",
                currency: "USD",
                quantity: 2,
                amount: 12320
            ),
            TieOutPartnerShare(
                fiscalMonth: november,
                productId: "pro.monthly",
                country: "JP",
                currency: "JPY",
                quantity: 1,
                amount: 6000,
                shareCurrency: "USD"
            ),
        ]
        let result = Self.compare(
            "2026-11-01",
            "2026-11-28",
            ledger: [
                Self.ledger("a", "2026-11-10T18:00:00Z"),
                Self.ledger("b", "2026-11-11T18:00:00Z"),
                Self.ledger("family", "2026-11-12T18:00:00Z", family: true),
                Self.ledger("jp", "2026-11-12T18:00:00Z", amount: 1_500_000, currency: "JPY", country: "JP"),
            ],
            apple: [
                Self.apple(2, "2026-11-10"), Self.apple(3, "2026-11-11", proceeds: 5830),
                Self.apple(4, "2026-11-12", amount: 1_500_000, proceeds: 1_050_000, currency: "JPY", country: "JP"),
            ],
            months: [november],
            shares: shares
        )
        let monthly = Self.causes(result, .monthly, .partnerShare)
        #expect(monthly[.tax] == 1160)
        #expect(monthly[.familySharing] == 6990)
        #expect(monthly[.unexplained] == 500)  // the Subscriber report's 12.82 against the Financial report's 12.32
        let fx = result.rows.filter { $0.key.view == .monthly && $0.key.cause == .exchangeRate }
        #expect(fx.count == 1)
        #expect(fx.first?.ledgerAmount == 1_050_000 && fx.first?.appleAmount == 6000 && fx.first?.appleUnits == 1)
        let usd = try #require(
            result.totals.first { $0.view == .monthly && $0.currency == "USD" && $0.appleCurrency == "USD" }
        )
        #expect(usd.appleAmount == 12320)
        #expect(usd.ledgerAmount == 3 * 6990)
        Self.expectTotalsAddUp(result)
    }

    @Test func theMatchIsGreedyAndDeterministic() {
        // Two identical ledger sales and two identical Apple rows a day apart: the same-day pairs win first, whatever
        // the input order.
        let ledger = [Self.ledger("t2", "2026-11-21T18:00:00Z"), Self.ledger("t1", "2026-11-20T18:00:00Z")]
        let apple = [Self.apple(3, "2026-11-21"), Self.apple(2, "2026-11-20")]
        let one = TieOutMatching(ledger: ledger, apple: apple)
        let two = TieOutMatching(ledger: ledger.reversed(), apple: apple.reversed())
        #expect(one.ledgerOfApple[0]?.index == 0 && one.ledgerOfApple[0]?.kind == .sameDay)
        #expect(one.ledgerOfApple[1]?.index == 1 && one.ledgerOfApple[1]?.kind == .sameDay)
        #expect(two.ledgerOfApple[0]?.index == 0 && two.ledgerOfApple[1]?.index == 1)
        // A neighbouring day is taken the day before first.
        let neighbour = TieOutMatching(
            // 22:00 PST on the 20th and 02:00 PST on the 22nd, each two hours from a midnight of the 21st.
            ledger: [Self.ledger("after", "2026-11-22T10:00:00Z"), Self.ledger("before", "2026-11-21T06:00:00Z")],
            apple: [Self.apple(2, "2026-11-21")]
        )
        #expect(neighbour.ledgerOfApple[0]?.index == 1 && neighbour.ledgerOfApple[0]?.kind == .neighbouringDay)
        // A sale at 10:00 PST on the day before is 14 hours from midnight: no timing, two unexplained events.
        let far = TieOutMatching(
            ledger: [Self.ledger("far", "2026-11-20T18:00:00Z")],
            apple: [Self.apple(2, "2026-11-21")]
        )
        #expect(far.ledgerOfApple.isEmpty && far.appleOfLedger.isEmpty)
        // Within nine hours of it (17:00 PST on the 20th, already the 21st in UTC), timing.
        let utc = TieOutMatching(
            ledger: [Self.ledger("utc", "2026-11-21T01:00:00Z")],
            apple: [Self.apple(2, "2026-11-21")]
        )
        #expect(utc.ledgerOfApple[0]?.kind == .neighbouringDay)
        // The same sale on a day no Subscriber report covers is no candidate: Apple's row stays a lost order.
        let uncovered = TieOutMatching(
            ledger: [Self.ledger("utc", "2026-11-21T01:00:00Z")],
            apple: [Self.apple(2, "2026-11-21")],
            uncovered: [Self.day("2026-11-20")]
        )
        #expect(uncovered.ledgerOfApple.isEmpty)
    }

    @Test func aRefundAppleReversedLaterIsRefundReversedAndWithoutTheReversalUnexplained() {
        let ledger = [Self.ledger("kept", "2026-11-02T18:00:00Z")]
        let apple = [
            Self.apple(2, "2026-11-02"),
            Self.apple(3, "2026-11-04", amount: -9990, proceeds: -6990, purchased: "2026-11-02"),
        ]
        func reversal(_ at: String) -> TieOutReversal {
            TieOutReversal(
                transactionId: "kept",
                productId: "pro.monthly",
                country: "US",
                currency: "USD",
                purchaseDay: Self.day("2026-11-02"),
                price: 9990,
                reversedAt: Self.instant(at)
            )
        }
        func compare(_ reversals: [TieOutReversal]) -> TieOutResult {
            TieOutComparison.compare(
                TieOutInput(
                    from: Self.day("2026-11-01"),
                    to: Self.day("2026-11-07"),
                    ledger: ledger,
                    apple: apple,
                    reversals: reversals
                )
            )
        }
        let reversed = compare([reversal("2026-11-06T12:00:00Z")])
        #expect(Self.causes(reversed, .daily, .customerPrice) == [.refundReversed: 9990])
        #expect(Self.causes(reversed, .daily, .proceeds) == [.refundReversed: 6990])
        #expect(reversed.appleOnly.isEmpty)
        #expect(reversed.rows.first { $0.key.cause == .refundReversed }?.detail.contains("reversed by Apple") == true)
        // A reversal signed before the refund's day cannot be its reversal; none at all leaves it unexplained.
        for reversals in [[reversal("2026-11-03T12:00:00Z")], []] {
            let result = compare(reversals)
            #expect(Self.causes(result, .daily, .customerPrice) == [.unexplained: 9990])
            #expect(result.appleOnly.map(\.line) == [3])
        }
        Self.expectTotalsAddUp(reversed)
    }

    @Test func theDetailedReportsSettlementTimingExplainsTheFinancialReportAgainstTheSubscriberReport() throws {
        let november = try #require(AppleFiscalMonth(named: "2026-11"))
        // Sold in November: a and b (6.99 each). Apple settled b in December, and a sale of October (6.99) in November.
        var settlement = TieOutSettlement(
            fiscalMonth: november,
            productId: "pro.monthly",
            country: "US",
            currency: "USD"
        )
        settlement.quantityIn = 1
        settlement.amountIn = 6990
        settlement.quantityOut = 1
        settlement.amountOut = 6990
        func compare(_ settlements: [TieOutSettlement], financial: Int64) -> TieOutResult {
            TieOutComparison.compare(
                TieOutInput(
                    from: Self.day("2026-11-01"),
                    to: Self.day("2026-11-28"),
                    ledger: [Self.ledger("a", "2026-11-10T18:00:00Z"), Self.ledger("b", "2026-11-27T18:00:00Z")],
                    apple: [Self.apple(2, "2026-11-10"), Self.apple(3, "2026-11-27")],
                    fiscalMonths: [november],
                    partnerShares: [
                        TieOutPartnerShare(
                            fiscalMonth: november,
                            productId: "pro.monthly",
                            country: "US",
                            currency: "USD",
                            quantity: 2,
                            amount: financial
                        )
                    ],
                    settlements: settlements,
                    settledLaterKnown: [november]
                )
            )
        }
        // In and out cancel: the timing row carries both, nothing unexplained.
        let even = compare([settlement], financial: 13980)
        #expect(Self.causes(even, .monthly, .partnerShare) == [:])
        let timing = try #require(even.rows.first { $0.key.view == .monthly && $0.key.cause == .timing })
        #expect(timing.detail.contains("sold before: 6.99 (1 units)"))
        // Only the December settlement: November's report holds one unit less; timing explains it.
        settlement.quantityIn = 0
        settlement.amountIn = 0
        let out = compare([settlement], financial: 6990)
        #expect(Self.causes(out, .monthly, .partnerShare) == [.timing: 6990])
        // Without the detailed reports, the same difference is unexplained.
        let unknown = compare([], financial: 6990)
        #expect(Self.causes(unknown, .monthly, .partnerShare) == [.unexplained: 6990])
        Self.expectTotalsAddUp(out)
        Self.expectTotalsAddUp(unknown)
    }
}
