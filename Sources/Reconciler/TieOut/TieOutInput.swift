import AppleReports

/// What the comparison reads: the ledger's and Apple's events of the window and the days around it, and the Financial
/// report rows of the fiscal months the monthly view covers (docs/tie-out.md, "What is compared").
public struct TieOutInput: Sendable {
    /// The days compared (Pacific), inclusive.
    public var from: PacificDay
    public var to: PacificDay
    /// Ledger events dated in the window and the horizon around it (matching looks there for partners).
    public var ledger: [TieOutLedgerEvent]
    /// Subscriber report events of the same days.
    public var apple: [TieOutAppleEvent]
    /// The days of the window and the horizon no imported Subscriber report covers: their ledger events match by
    /// refund purchase only (`TieOutMatching`), and the daily view leaves them out (they would all read as
    /// unexplained).
    public var daysWithoutReport: Set<PacificDay>
    /// Ledger transactions whose refund Apple reversed, in the horizon (`TieOutReversal`).
    public var reversals: [TieOutReversal]
    /// The fiscal months of the monthly view: those wholly inside the window whose Financial report is imported.
    public var fiscalMonths: [AppleFiscalMonth]
    public var partnerShares: [TieOutPartnerShare]
    /// Per month and key, what settled in another month than it was sold (`TieOutSettlement`).
    public var settlements: [TieOutSettlement]
    /// The months of `fiscalMonths` whose next month's detailed Financial report is imported: what they sold and the
    /// next month settled is known.
    public var settledLaterKnown: Set<AppleFiscalMonth>
    /// The commission the ledger's proceeds estimate uses (`CommissionPolicy`).
    public var commission: CommissionPolicy

    public init(
        from: PacificDay,
        to: PacificDay,
        ledger: [TieOutLedgerEvent],
        apple: [TieOutAppleEvent],
        daysWithoutReport: Set<PacificDay> = [],
        reversals: [TieOutReversal] = [],
        fiscalMonths: [AppleFiscalMonth] = [],
        partnerShares: [TieOutPartnerShare] = [],
        settlements: [TieOutSettlement] = [],
        settledLaterKnown: Set<AppleFiscalMonth> = [],
        commission: CommissionPolicy = .standard
    ) {
        self.from = from
        self.to = to
        self.ledger = ledger
        self.apple = apple
        self.daysWithoutReport = daysWithoutReport
        self.reversals = reversals
        self.fiscalMonths = fiscalMonths
        self.partnerShares = partnerShares
        self.settlements = settlements
        self.settledLaterKnown = settledLaterKnown
        self.commission = commission
    }

    /// Whether `day` is one of the days compared.
    public func contains(_ day: PacificDay) -> Bool { day >= from && day <= to }

    /// Whether the daily view compares `day`: in the window, with a Subscriber report.
    public func comparesDaily(_ day: PacificDay) -> Bool { contains(day) && !daysWithoutReport.contains(day) }
}
