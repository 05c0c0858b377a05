/// The App Store Connect API's report downloads, answered from the population's truth (docs/simulator.md, "App Store
/// Connect reports"): a request's report as gzip bytes, or Apple's error. Availability follows the simulator's clock:
/// a day's Sales and Trends reports from 8 a.m. Pacific the next day, for a year; a fiscal month's Financial reports once
/// the following fiscal month has ended.
struct ReportsService: Sendable {
    let truth: SalesTruth
    let identity: ServerAPIIdentity
    let clock: SimClock

    /// Days a daily report is kept (older: 410).
    static let dailyRetentionDays: Int64 = 365
    /// Events settle up to this many days after they happen (`SalesEvent.settlementDay`).
    static let settlementLagDays: Int64 = 3

    init(population: Population, identity: ServerAPIIdentity, clock: SimClock) {
        truth = SalesTruth(population: population)
        self.identity = identity
        self.clock = clock
    }

    /// The report's text (before gzip), or the error Apple answers.
    func report(_ request: ReportRequest) throws(ConnectAPIError) -> String {
        let now = clock.now()
        switch request {
        case .subscriber(let day):
            return try subscriber(day: day, now: now)
        case .subscriptionEvent(let day):
            try checkDaily(day, now: now)
            let events = truth.subscriptionEvents(on: day)
            guard !events.isEmpty else { throw .noSales }
            return SubscriptionEventReport(population: truth.population, appAppleId: identity.appAppleId).text(
                day: day,
                events: events
            )
        case .subscription(let day):
            try checkDaily(day, now: now)
            let text = SubscriptionReport(population: truth.population, appAppleId: identity.appAppleId).text(
                plans: truth.reportedPlans(asOf: day.end - 1),
                at: day.end - 1
            )
            guard text.contains("\n"), text.split(separator: "\n").count > 1 else { throw .noSales }
            return text
        case .financial(let month, let detailed):
            return try financial(month: month, detailed: detailed, now: now)
        }
    }

    /// A daily report is out from 8 a.m. Pacific the next day, for `dailyRetentionDays`.
    private func checkDaily(_ day: ReportDay, now: Int64) throws(ConnectAPIError) {
        guard now >= day.adding(1).at(hour: 8) else {
            throw .notFound(
                "The report you requested is not available yet. Daily reports for \(day.iso) are available after 8 a.m. Pacific time on \(day.adding(1).iso)."
            )
        }
        guard day.number >= ReportDay.containing(now).number - Self.dailyRetentionDays else { throw .gone }
    }

    private func subscriber(day: ReportDay, now: Int64) throws(ConnectAPIError) -> String {
        try checkDaily(day, now: now)
        let events = truth.events(from: day.start, until: day.end, asOf: day.end - 1)
        guard !events.isEmpty else { throw .noSales }
        return SubscriberReport(population: truth.population, appAppleId: identity.appAppleId).text(
            day: day,
            events: events
        )
    }

    private func financial(month: FiscalMonth, detailed: Bool, now: Int64) throws(ConnectAPIError) -> String {
        guard now >= month.next.last.end else {
            throw .notFound(
                "The report you requested is not available yet. Financial reports for fiscal month \(month.reportDate) are available after \(month.next.last.iso), the end of the following fiscal month."
            )
        }
        let candidates = truth.events(
            from: month.first.adding(-Self.settlementLagDays).start,
            until: month.last.end,
            asOf: month.last.end - 1
        )
        let report = FinancialReport(population: truth.population, month: month, candidates: candidates)
        guard !report.events.isEmpty else { throw .noSales }
        return detailed ? report.detailed() : report.consolidated()
    }
}
