import AppStoreClient
import AppStoreSignedData
import CivilTime
import Foundation
import Logging
import Postgres
import ReceiptDomain

/// Reads Get Notification History (`POST /inApps/v1/notifications/history`) from where the previous run
/// stopped, for production and then sandbox, and acts on it (docs/architecture.md, "Notification
/// history"):
///
/// - the window is `[completed_through - overlap, asOf)`, or `[asOf - lookback, asOf)` the first time, never
///   starting more than 180 days before `asOf`; a window left unfinished (a stored pagination token) is
///   finished first with the same body, because Apple's token only works with it;
/// - every `signedPayload` is verified (with its `signedTransactionInfo`); a refused one is counted with its
///   reason and neither stored nor acted on;
/// - each page is one transaction: its notifications (`ON CONFLICT (notification_uuid) DO NOTHING`), the
///   run's items for the subscriptions that new notifications name, the run's `due_count`, and the cursor
///   (the next page's token, or `completed_through` at the end). A kill after a commit resumes on the next
///   page; a kill before it reads the page again. Nothing is skipped, nothing acted on twice.
///
/// Requests are sequential under the endpoint's own budget (`ServerAPIBudgets.notificationHistory`);
/// each window's `AttemptPlan` decides its pages, retries and their waits (backoff with jitter, never
/// shorter than a 429's `Retry-After`), waited on the injected clock's timers, never a thread sleep; 401 is a
/// configuration error (exit 78). A sandbox failure is a warning; a production failure is thrown (the runner
/// reconciles the window without it and ends the run partial).
/// Payloads and tokens are never logged.
public final class NotificationHistoryReader {
    /// Apple keeps notification history for 180 days.
    public static let maximumLookback: TimeInterval = 180 * 86_400
    /// The sandbox keeps 30 days (docs/architecture.md, "Notification history").
    public static let sandboxRetention: TimeInterval = 30 * 86_400

    static func retention(_ environment: AppleEnvironment) -> TimeInterval {
        environment == .sandbox ? sandboxRetention : maximumLookback
    }

    /// Apple refused a stored page token (4000014 invalid, 4000017 expired): the window is read again from its
    /// start (notifications are stored once, so a re-read is harmless).
    struct PaginationTokenRejected: Error {
        let reason: String
    }
    /// How far before the last window's end the next window starts (its notifications are deduplicated).
    public static let defaultOverlap: TimeInterval = 3600

    private let connection: PostgresConnection
    private let client: ServerAPIClient
    private let bundleId: String
    private let verifiers: [AppleEnvironment: NotificationPayloadVerifier]
    /// Retries, their waits and `Retry-After` (`AttemptPlan`, one plan per window).
    private let policy: AttemptPolicy
    /// Where the waits happen: a Dispatch timer on the system clock, a virtual one in tests. No thread sleeps.
    private let clock: any PipelineClock
    private let overlap: TimeInterval
    private let logger: Logger
    private var limiters: [AppleEnvironment: BudgetLimiter] = [:]
    private let waitQueue = DispatchQueue(label: "renewal-reconciler.notification-history.wait")

    /// - Parameters:
    ///   - connection: the reader's own (the run's work connection): used only from the caller's thread.
    ///   - rateCap: `--rate`; the notification history budget is never higher.
    ///   - policy: the run's attempt policy (`AttemptPolicy(RunOptions)`).
    public init(
        connection: PostgresConnection,
        client: ServerAPIClient,
        settings: ServerAPISettings,
        logger: Logger,
        rateCap: Double? = nil,
        policy: AttemptPolicy = AttemptPolicy(),
        overlap: TimeInterval = NotificationHistoryReader.defaultOverlap,
        clock: any PipelineClock = SystemPipelineClock()
    ) throws {
        self.connection = connection
        self.client = client
        self.bundleId = settings.api.bundleId
        self.policy = policy
        self.clock = clock
        self.overlap = max(0, overlap)
        self.logger = logger
        let cache = ChainCache()
        var verifiers: [AppleEnvironment: NotificationPayloadVerifier] = [:]
        let budgets = rateCap.map { settings.budgets.capped(at: $0) } ?? settings.budgets
        for environment in AppleEnvironment.allCases {
            verifiers[environment] = NotificationPayloadVerifier(
                roots: settings.roots,
                bundleId: settings.api.bundleId,
                appAppleId: environment == .production ? settings.appAppleId : nil,
                environment: environment == .production ? .production : .sandbox,
                cache: cache
            )
            limiters[environment] = try BudgetLimiter(budget: budgets.notificationHistory(environment))
        }
        self.verifiers = verifiers
    }

    /// Takes over imported notifications, then reads both environments to `asOf`. Blocks the calling thread.
    /// - Throws: `ConfigurationError` on 401, `NotificationHistoryError` when production cannot be read,
    ///   a database error; what was committed before stays committed.
    public func pull(runId: Int64, asOf: Date, lookback: TimeInterval, dryRun: Bool) throws -> NotificationPullSummary {
        var summary = NotificationPullSummary()
        var unknown = Set<String>()
        let claimed = try connection.transaction { conn in
            try NotificationStore.claimUnseen(runId: runId, dryRun: dryRun, conn)
        }
        summary.importedClaimed = claimed.claimed
        summary.madeDue += claimed.madeDue
        // Before Apple is asked, so a failing Apple does not lose them either.
        summary.madeDue += try NotificationStore.makeDueAgain(runId: runId, asOf: asOf, connection)
        unknown.formUnion(claimed.unknown)
        for environment in [AppleEnvironment.production, .sandbox] {
            do {
                try pull(environment, runId: runId, asOf: asOf, lookback: lookback, dryRun: dryRun, &summary, &unknown)
            } catch let error as NotificationHistoryError where environment == .sandbox {
                logger.warning("\(error) (a sandbox failure does not fail the run)")
                summary.warnings.append("Sandbox: \(error.reason)")
            }
        }
        // A mass renewal-date extension names a product, not subscriptions: its entitled rows are due now.
        if !dryRun {
            summary.madeDue += try connection.transaction { conn in
                try NotificationStore.makeExtendedDue(runId: runId, conn)
            }
        }
        summary.unknownSubscriptions = unknown.sorted()
        return summary
    }

    // MARK: - One environment

    private struct Cursor {
        var windowStart: Int64?
        var windowEnd: Int64?
        var token: String?
        var completedThrough: Int64?
    }

    private func pull(
        _ environment: AppleEnvironment,
        runId: Int64,
        asOf: Date,
        lookback: TimeInterval,
        dryRun: Bool,
        _ summary: inout NotificationPullSummary,
        _ unknown: inout Set<String>
    ) throws {
        let cursor = try loadCursor(environment)
        let asOfMs = Self.millis(asOf)
        let earliest = asOfMs - Int64((Self.retention(environment) - 600) * 1000)
        var completedThrough = cursor.completedThrough
        if let token = cursor.token, let start = cursor.windowStart, let end = cursor.windowEnd {
            if dryRun {
                // A dry run moves no cursor: it reads the unfinished window from its start.
                completedThrough = start + Int64(overlap * 1000)
            } else {
                logger.info(
                    "notification history (\(environment.rawValue)): finishing the window \(Self.text(start)) to \(Self.text(end)) from its stored page"
                )
                do {
                    try readWindow(
                        environment,
                        start: start,
                        end: end,
                        token: token,
                        runId: runId,
                        dryRun: false,
                        &summary,
                        &unknown
                    )
                } catch let rejected as PaginationTokenRejected {
                    let warning =
                        "\(environment.rawValue): the stored page token was refused (\(rejected.reason)); reading the window \(Self.text(start)) to \(Self.text(end)) again from its start"
                    logger.warning("notification history: \(warning)")
                    summary.warnings.append(warning)
                    try readWindow(
                        environment,
                        start: max(start, earliest),
                        end: end,
                        token: nil,
                        runId: runId,
                        dryRun: false,
                        &summary,
                        &unknown
                    )
                }
                completedThrough = end
            }
        }
        var start = completedThrough.map { $0 - Int64(overlap * 1000) } ?? asOfMs - Int64(lookback * 1000)
        if start < earliest {
            if completedThrough != nil {
                let warning =
                    "\(environment.rawValue): the last read ended \(Self.text(completedThrough!)), more than \(Int(Self.retention(environment) / 86_400)) days before \(Self.text(asOfMs)); notifications older than Apple keeps were missed"
                logger.warning("notification history: \(warning)")
                summary.warnings.append(warning)
            }
            start = earliest
        }
        guard start < asOfMs else { return }
        try readWindow(
            environment,
            start: start,
            end: asOfMs,
            token: nil,
            runId: runId,
            dryRun: dryRun,
            &summary,
            &unknown
        )
    }

    private func readWindow(
        _ environment: AppleEnvironment,
        start: Int64,
        end: Int64,
        token firstToken: String?,
        runId: Int64,
        dryRun: Bool,
        _ summary: inout NotificationPullSummary,
        _ unknown: inout Set<String>
    ) throws {
        let body = NotificationHistoryRequest(startDate: start, endDate: end)
        let verifier = verifiers[environment]!
        // One plan per window: its pages (the token Apple returns), retries and waits.
        var plan = AttemptPlan(policy: policy, startingEnvironment: environment, page: firstToken)
        var step = plan.start()
        var problem = ""
        while true {
            switch step {
            case .send, .retry:
                if case .retry(_, _, let delay, _) = step {
                    logger.notice(
                        "notification history (\(environment.rawValue)): \(problem); retrying in \(delay / 1_000_000) ms"
                    )
                    wait(delay)
                }
                switch try fetch(environment, body: body, token: plan.page) {
                case .page(let response):
                    let next = try store(
                        response,
                        environment: environment,
                        verifier: verifier,
                        start: start,
                        end: end,
                        runId: runId,
                        dryRun: dryRun,
                        &summary,
                        &unknown
                    )
                    step = plan.next(after: .usable(nextPage: next), now: clock.date())
                case .retryable(let why, let notBefore):
                    problem = why
                    step = plan.next(after: .retryable(notBefore: notBefore), now: clock.date())
                }
            case .finished(.lastPage):
                return
            case .finished(let end):
                throw NotificationHistoryError(environment: environment, reason: "\(problem), \(end)")
            }
        }
    }

    /// Verifies and commits one page (`commitPage`); returns the next page's token, nil at the window's end.
    private func store(
        _ response: NotificationHistoryResponse,
        environment: AppleEnvironment,
        verifier: NotificationPayloadVerifier,
        start: Int64,
        end: Int64,
        runId: Int64,
        dryRun: Bool,
        _ summary: inout NotificationPullSummary,
        _ unknown: inout Set<String>
    ) throws -> String? {
        summary.pages += 1
        var verified: [VerifiedNotification] = []
        for item in response.notificationHistory {
            guard let payload = item.signedPayload else { continue }
            summary.read += 1
            do {
                var notification = try verifier.verify(payload)
                // A shape that names no environment (a type this version does not know) is of the history asked.
                if notification.environment == nil { notification.environment = environment.rawValue }
                verified.append(notification)
            } catch {
                summary.refused[error.code.rawValue, default: 0] += 1
                logger.warning("notification history (\(environment.rawValue)): payload refused: \(error)")
            }
        }
        let next: String? = response.hasMore == true ? response.paginationToken : nil
        if response.hasMore == true && next == nil {
            logger.warning(
                "notification history (\(environment.rawValue)): hasMore without a paginationToken; the window ends here"
            )
        }
        let page = try connection.transaction { conn in
            try commitPage(
                verified,
                environment: environment,
                start: start,
                end: end,
                next: next,
                runId: runId,
                dryRun: dryRun,
                conn
            )
        }
        CrashPoints.reach("notifications-page")
        summary.stored += page.stored
        summary.alreadyStored += page.alreadyStored
        summary.madeDue += page.madeDue
        unknown.formUnion(page.unknown)
        return next
    }

    private struct PageResult {
        var stored = 0
        var alreadyStored = 0
        var madeDue = 0
        var unknown: [String] = []
    }

    private func commitPage(
        _ notifications: [VerifiedNotification],
        environment: AppleEnvironment,
        start: Int64,
        end: Int64,
        next: String?,
        runId: Int64,
        dryRun: Bool,
        _ conn: PostgresConnection
    ) throws -> PageResult {
        var result = PageResult()
        // One page can name a notification once only, but be safe: the first copy wins.
        var seen = Set<String>()
        let unique = notifications.filter { seen.insert($0.notificationUUID).inserted }
        let fresh: [VerifiedNotification]
        if dryRun {
            let existing = try NotificationStore.existing(unique.map(\.notificationUUID), conn)
            fresh = unique.filter { !existing.contains($0.notificationUUID) }
            result.unknown = try NotificationStore.unknown(fresh.compactMap(\.originalTransactionId), conn)
            try LedgerWriter(runId: runId).insertDryRun(try NotificationStore.oneTimePurchases(fresh, conn), conn)
        } else {
            let stored = try NotificationStore.insert(unique, source: "history", runId: runId, conn)
            fresh = stored.inserted
            result.unknown = stored.unknownSubscriptions
            result.stored = fresh.count
        }
        result.alreadyStored = unique.count - fresh.count
        result.madeDue = try NotificationStore.makeDue(fresh.compactMap(\.originalTransactionId), runId: runId, conn)
        if !dryRun {
            try conn.execute(
                """
                INSERT INTO notification_cursors (bundle_id, environment, window_start, window_end, pagination_token,
                                                  completed_through, updated_at)
                VALUES ($1, $2, to_timestamp($3::bigint / 1000.0), to_timestamp($4::bigint / 1000.0), $5,
                        CASE WHEN $5::text IS NULL THEN to_timestamp($4::bigint / 1000.0) END, now())
                ON CONFLICT (bundle_id, environment) DO UPDATE
                   SET window_start = EXCLUDED.window_start, window_end = EXCLUDED.window_end,
                       pagination_token = EXCLUDED.pagination_token,
                       completed_through = COALESCE(EXCLUDED.completed_through, notification_cursors.completed_through),
                       updated_at = now()
                """,
                [bundleId, environment.rawValue, start, end, next]
            )
        }
        return result
    }

    private func loadCursor(_ environment: AppleEnvironment) throws -> Cursor {
        guard
            let row = try connection.queryFirst(
                """
                SELECT (extract(epoch FROM window_start) * 1000)::bigint AS window_start,
                       (extract(epoch FROM window_end) * 1000)::bigint AS window_end,
                       pagination_token,
                       (extract(epoch FROM completed_through) * 1000)::bigint AS completed_through
                  FROM notification_cursors WHERE bundle_id = $1 AND environment = $2
                """,
                [bundleId, environment.rawValue]
            )
        else { return Cursor() }
        return Cursor(
            windowStart: try row.decode("window_start", as: Int64?.self),
            windowEnd: try row.decode("window_end", as: Int64?.self),
            token: try row.decode("pagination_token", as: String?.self),
            completedThrough: try row.decode("completed_through", as: Int64?.self)
        )
    }

    // MARK: - Requests

    /// What one request for a page came to, when it is not an error that ends the window.
    private enum Fetched {
        case page(NotificationHistoryResponse)
        /// Worth another try (the plan decides whether and when): what went wrong, Apple's `Retry-After`.
        case retryable(String, notBefore: Date?)
    }

    /// One request for a page, under the endpoint's budget.
    /// - Throws: `ConfigurationError` on 401, `PaginationTokenRejected`, `NotificationHistoryError` for an
    ///   answer that is final.
    private func fetch(
        _ environment: AppleEnvironment,
        body: NotificationHistoryRequest,
        token: String?
    ) throws
        -> Fetched
    {
        let sentAt = waitForSlot(environment)
        let result = send(body, token: token, environment: environment)
        let attempt = result.attempt
        let now = clock.now()
        if let sentAt { limiters[environment]?.answered(sentAt: sentAt, now: now) }
        let classification = attempt.classification
        _ = limiters[environment]?.record(
            throttled: classification == .rateLimited || attempt.httpStatus == 503,
            now: now
        )
        switch classification {
        case .success:
            switch result.body {
            case .success(let response)?: return .page(response)
            case .failure(let error)?:
                return .retryable("an answer that does not decode (\(error.code.rawValue))", notBefore: nil)
            case nil: return .retryable(Self.describe(attempt), notBefore: nil)
            }
        case .unauthorized:
            throw ConfigurationError(
                "the App Store Server API answered 401 to Get Notification History (\(environment.rawValue)): "
                    + "the key, key id, issuer id or bundle id is wrong (APPLE_PRIVATE_KEY_FILE, APPLE_KEY_ID, "
                    + "APPLE_ISSUER_ID, APPLE_BUNDLE_ID)"
            )
        case .rateLimited:
            if let retryAfter = attempt.retryAfter {
                limiters[environment]?.pause(until: now + clock.nanoseconds(until: retryAfter))
            }
            let code = attempt.errorCode.map(String.init) ?? "no error code"
            return .retryable("HTTP 429 (\(code))", notBefore: attempt.retryAfter)
        case .retryable:
            return .retryable(Self.describe(attempt), notBefore: nil)
        case .notFound, .failed:
            if token != nil, let code = attempt.errorCode, code == 4_000_014 || code == 4_000_017 {
                throw PaginationTokenRejected(reason: Self.describe(attempt))
            }
            throw NotificationHistoryError(environment: environment, reason: Self.describe(attempt))
        }
    }

    /// One request, waited for (the answer arrives on the HTTP client's queue; this thread blocks on a semaphore).
    private func send(
        _ body: NotificationHistoryRequest,
        token: String?,
        environment: AppleEnvironment
    )
        -> ServerAPIResult<NotificationHistoryResponse>
    {
        let answered = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var answer: ServerAPIResult<NotificationHistoryResponse>?
        client.notificationHistory(body, paginationToken: token, environment: environment) { result in
            answer = result
            answered.signal()
        }
        answered.wait()
        return answer!
    }

    /// Waits until the environment's budget admits the next request; returns the send tick the budget recorded
    /// (nil without a budget).
    private func waitForSlot(_ environment: AppleEnvironment) -> UInt64? {
        guard var limiter = limiters[environment] else { return nil }
        wait(limiter.reserve(now: clock.now()))
        var now = clock.now()
        while let delay = limiter.trySend(now: now) {
            wait(delay)
            now = clock.now()
        }
        limiters[environment] = limiter
        return now
    }

    /// Blocks this thread on a semaphore until the clock's timer fires (a virtual clock fires it when the test
    /// moves time): never a thread sleep.
    private func wait(_ nanoseconds: UInt64) {
        guard nanoseconds > 0 else { return }
        let fired = DispatchSemaphore(value: 0)
        clock.schedule(after: nanoseconds, on: waitQueue) { fired.signal() }
        fired.wait()
    }

    private static func describe(_ result: ServerAPIAttemptResult) -> String {
        if let failure = result.transportFailure { return "transport failure (\(failure))" }
        var text = "HTTP \(result.httpStatus.map(String.init) ?? "?")"
        if let code = result.errorCode { text += ", errorCode \(code)" }
        return text
    }

    static func millis(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }

    static func text(_ millis: Int64) -> String {
        RFC3339.string(Date(timeIntervalSince1970: TimeInterval(millis) / 1000))
    }
}
