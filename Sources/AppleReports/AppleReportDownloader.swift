import AppStoreClient
import Foundation
import Postgres
import Synchronization

/// `apple-reports download`: fetches reports from the App Store Connect API and stores each file as `import`
/// does (docs/apple-reports.md, "Downloading"). A report already stored (by an earlier download or an import) is
/// not asked for again, so a download interrupted anywhere resumes where it stopped; each request's retries
/// follow the one attempt plan (`AttemptPlan`: backoff with jitter, never sooner than Apple's `Retry-After`),
/// waiting through `sleep` (the real clock, or a virtual one in tests).
public struct AppleReportDownloader {
    /// Sends one request and hands back Apple's reply (the App Store Connect client, or a stand-in).
    public typealias Send = (AppStoreConnectReportRequest) -> AppStoreConnectClient.Reply

    /// The key was refused or the hour's requests are spent: nothing more can be asked now.
    public struct Stopped: Error, CustomStringConvertible {
        /// True when Apple's hourly budget is spent (a later run goes on); false when the key was refused.
        public let budgetSpent: Bool
        public let description: String
    }

    let connection: PostgresConnection
    let send: Send
    let policy: AttemptPolicy
    let sleep: (UInt64) -> Void
    let now: () -> Date

    public init(
        connection: PostgresConnection,
        policy: AttemptPolicy = AttemptPolicy(maxAttempts: 5, base: .seconds(2), cap: .seconds(60)),
        sleep: @escaping (UInt64) -> Void = { Thread.sleep(forTimeInterval: Double($0) / 1e9) },
        now: @escaping () -> Date = { Date() },
        send: @escaping Send
    ) {
        self.connection = connection
        self.send = send
        self.policy = policy
        self.sleep = sleep
        self.now = now
    }

    /// The client's `download` as a blocking `Send`.
    public static func blocking(_ client: AppStoreConnectClient) -> Send {
        { request in
            let done = DispatchSemaphore(value: 0)
            let reply = Mutex<AppStoreConnectClient.Reply?>(nil)
            client.download(request) { answer in
                reply.withLock { $0 = answer }
                done.signal()
            }
            done.wait()
            return reply.withLock { $0! }
        }
    }

    /// Downloads and stores `requests` in order, telling `progress` of each; stops early (throwing `Stopped`)
    /// when the key is refused or Apple's hourly budget is spent.
    public func download(
        _ requests: [AppStoreConnectReportRequest],
        progress: (AppleReportDownloadOutcome) -> Void
    ) throws -> [AppleReportDownloadOutcome] {
        var outcomes: [AppleReportDownloadOutcome] = []
        for (index, request) in requests.enumerated() {
            var budgetSpent = false
            let result: AppleReportDownloadOutcome.Result
            if try isStored(request) {
                result = .alreadyStored
            } else {
                (result, budgetSpent) = try fetch(request)
            }
            let outcome = AppleReportDownloadOutcome(label: request.label, result: result)
            outcomes.append(outcome)
            progress(outcome)
            // The answer that spent the hour's last request is kept; the next request waits for another run.
            if budgetSpent, index < requests.count - 1 { throw Self.budgetStop }
        }
        return outcomes
    }

    static let budgetStop = Stopped(
        budgetSpent: true,
        description: "Apple's hourly request budget for this key is spent; run again later"
    )

    /// One report through the attempt plan, stored when a file comes; whether Apple said no request is left this
    /// hour (`X-Rate-Limit`) with the last answer.
    func fetch(
        _ request: AppStoreConnectReportRequest
    ) throws -> (result: AppleReportDownloadOutcome.Result, budgetSpent: Bool) {
        var plan = AttemptPlan(policy: policy)
        var step = plan.start()
        while true {
            switch step {
            case .send:
                break
            case .retry(_, _, let wait, _):
                sleep(wait)
            case .finished(let end):
                return (.failed("gave up after \(plan.requests) requests: \(end)"), false)
            }
            let reply = send(request)
            let spent = reply.remainingThisHour == 0
            switch reply.answer {
            case .file(let bytes):
                return (store(bytes, request), spent)
            case .noSales:
                return (.noSales, spent)
            case .notYetAvailable(let detail):
                return (.notYetAvailable(detail), spent)
            case .gone(let detail):
                return (.gone(detail), spent)
            case .refused(let status, let code, let detail) where status == 401 || status == 403:
                throw Stopped(
                    budgetSpent: false,
                    description: "App Store Connect refused the key (HTTP \(status) \(code)): \(detail)"
                )
            case .refused(let status, let code, let detail):
                return (.failed("HTTP \(status) \(code): \(detail)"), spent)
            case .retryable(let notBefore, _):
                if spent { throw Self.budgetStop }
                step = plan.next(after: .retryable(notBefore: notBefore), now: now())
            }
        }
    }

    /// Parses and stores a downloaded file; a file that does not read stores nothing and says why.
    func store(_ bytes: [UInt8], _ request: AppStoreConnectReportRequest) -> AppleReportDownloadOutcome.Result {
        let name = "\(request.report.rawValue)_\(request.vendorNumber)_\(request.reportDate).txt.gz"
        do {
            let date = request.report.isDaily ? request.reportDate : nil  // the Subscription report has no date column
            let contents = try AppleReportParser.parse(data: Data(bytes), file: name, date: date)
            switch try AppleReportStore(connection: connection).store(
                contents,
                fileName: name,
                vendorNumber: request.vendorNumber
            ) {
            case .imported(let fileId, let rows): return .stored(fileId: fileId, rows: rows)
            case .alreadyImported(let fileId, _, _): return .sameFileStoredBefore(fileId: fileId)
            }
        } catch var error as PostgresError {
            error.statement = nil
            return .failed(String(describing: error))
        } catch {
            return .failed(String(describing: error))
        }
    }

    /// Whether a file of this report and period is stored: a Sales and Trends report of the day, a Financial report
    /// of the fiscal month (whoever stored it: an earlier download or `import`).
    func isStored(_ request: AppStoreConnectReportRequest) throws -> Bool {
        // The request's report names are the stored kinds' (`subscriber`, `subscription_event`, ...).
        guard let kind = AppleReportKind(rawValue: request.report.rawValue) else { return false }
        let sql: String
        let period: String
        if kind.isDaily {
            sql = "SELECT 1 FROM apple_report_files WHERE kind = $1 AND period_start = $2::date LIMIT 1"
            period = request.reportDate
        } else {
            sql = "SELECT 1 FROM apple_report_files WHERE kind = $1 AND fiscal_month = $2 LIMIT 1"
            guard let month = AppleFiscalMonth(reportDate: request.reportDate) else { return false }
            period = month.name
        }
        return try connection.queryFirst(sql, [kind.rawValue, period]) != nil
    }
}
