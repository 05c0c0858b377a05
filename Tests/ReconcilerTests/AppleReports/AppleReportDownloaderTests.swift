import AppStoreClient
import AppleReports
import Foundation
import Postgres
import Synchronization
import TestSupport
import Testing

/// `AppleReportDownloader` on a real PostgreSQL with Apple's answers scripted per report: what is stored, what is
/// skipped on a second download (resume), how busy answers are retried on a virtual clock, and what stops it.
@Suite struct AppleReportDownloaderTests {
    typealias F = AppleReportFixtures
    typealias Reply = AppStoreConnectClient.Reply

    /// Apple's answers, in order, per report label; every request is counted.
    final class Script: Sendable {
        let answers: Mutex<[String: [Reply]]>
        let asked = Mutex<[String]>([])
        /// The waits the downloader asked its (virtual) clock for, in nanoseconds.
        let waits = Mutex<[UInt64]>([])

        init(_ answers: [String: [Reply]]) { self.answers = Mutex(answers) }

        func send(_ request: AppStoreConnectReportRequest) -> Reply {
            asked.withLock { $0.append(request.label) }
            return answers.withLock { answers in
                guard var queue = answers[request.label], !queue.isEmpty else {
                    return Reply(
                        answer: .refused(status: 400, code: "UNSCRIPTED", detail: request.label),
                        remainingThisHour: nil
                    )
                }
                let next = queue.removeFirst()
                answers[request.label] = queue
                return next
            }
        }
    }

    static func file(day: String) -> [UInt8] {
        Array(F.subscriberReport([F.subscriberRow(["Event Date": day]), F.subscriberRow(["Event Date": day])]).utf8)
    }

    static func reply(_ answer: AppStoreConnectAnswer, remaining: Int? = 3000) -> Reply {
        Reply(answer: answer, remainingThisHour: remaining)
    }

    static let days = AppleReportRequests.covering(
        from: PacificDay("2026-11-18")!,
        through: PacificDay("2026-11-20")!,
        reports: [.subscriber],
        vendorNumber: "85012345"
    )

    func downloader(_ world: StoreWorld, _ script: Script) -> AppleReportDownloader {
        AppleReportDownloader(
            connection: world.connection,
            policy: AttemptPolicy(maxAttempts: 3, base: .seconds(2), cap: .seconds(60), jitter: .none),
            sleep: { wait in script.waits.withLock { $0.append(wait) } },
            now: { Date(timeIntervalSince1970: 1_795_000_000) },
            send: script.send
        )
    }

    @Test func filesAreStoredEmptyAndLateDaysListedAndASecondDownloadAsksOnlyForWhatIsMissing() throws {
        let world = try StoreWorld()
        let script = Script([
            "subscriber 2026-11-18": [Self.reply(.file(Self.file(day: "2026-11-18")))],
            "subscriber 2026-11-19": [Self.reply(.noSales), Self.reply(.noSales)],
            "subscriber 2026-11-20": [
                Self.reply(.notYetAvailable(detail: "The report is not available yet.")),
                Self.reply(.file(Self.file(day: "2026-11-20"))),
            ],
        ])
        let first = try downloader(world, script).download(Self.days) { _ in }
        #expect(
            first.map(\.result) == [
                .stored(fileId: 1, rows: 2), .noSales, .notYetAvailable("The report is not available yet."),
            ]
        )
        #expect(first.allSatisfy { !$0.isFailure })

        // The next morning: the stored day is not asked for again; the empty and the late day are.
        let second = try downloader(world, script).download(Self.days) { _ in }
        #expect(second.map(\.result) == [.alreadyStored, .noSales, .stored(fileId: 2, rows: 2)])
        #expect(
            script.asked.withLock { $0 } == [
                "subscriber 2026-11-18", "subscriber 2026-11-19", "subscriber 2026-11-20",
                "subscriber 2026-11-19", "subscriber 2026-11-20",
            ]
        )
        #expect(script.waits.withLock { $0 }.isEmpty)
        let stored = try world.connection.query(
            "SELECT period_start::text AS day, vendor_number, row_count FROM apple_report_files ORDER BY id"
        )
        #expect(try stored.map { try $0.decode("day", as: String.self) } == ["2026-11-18", "2026-11-20"])
        #expect(try stored.map { try $0.decode("vendor_number", as: String.self) } == ["85012345", "85012345"])
    }

    @Test func busyAnswersAreRetriedWithBackoffNeverSoonerThanAppleAsks() throws {
        let world = try StoreWorld()
        let now = Date(timeIntervalSince1970: 1_795_000_000)
        let script = Script([
            "subscriber 2026-11-18": [
                Self.reply(.retryable(notBefore: now.addingTimeInterval(30), reason: "HTTP 429 RATE_LIMIT_EXCEEDED")),
                Self.reply(.retryable(notBefore: nil, reason: "HTTP 503")),
                Self.reply(.file(Self.file(day: "2026-11-18"))),
            ],
            "subscriber 2026-11-19": [
                Self.reply(.retryable(notBefore: nil, reason: "HTTP 500")),
                Self.reply(.retryable(notBefore: nil, reason: "HTTP 500")),
                Self.reply(.retryable(notBefore: nil, reason: "HTTP 500")),
            ],
            "subscriber 2026-11-20": [
                Self.reply(.refused(status: 400, code: "PARAMETER_ERROR.INVALID", detail: "version"))
            ],
        ])
        let outcomes = try downloader(world, script).download(Self.days) { _ in }
        #expect(outcomes[0].result == .stored(fileId: 1, rows: 2))
        // 30 s asked by Apple (more than the 2 s backoff), then 4 s of backoff; then 2 s and 4 s, and the third
        // failure of the day gives up.
        #expect(script.waits.withLock { $0 } == [30_000_000_000, 4_000_000_000, 2_000_000_000, 4_000_000_000])
        guard case .failed(let reason) = outcomes[1].result else {
            Issue.record("\(outcomes[1])")
            return
        }
        #expect(reason.contains("gave up after 3 requests"))
        #expect(outcomes[2].result == .failed("HTTP 400 PARAMETER_ERROR.INVALID: version"))
        #expect(
            try world.connection.queryFirst("SELECT count(*) AS n FROM apple_report_files")?.decode("n", as: Int.self)
                == 1
        )
    }

    @Test func aRefusedKeyOrASpentHourlyBudgetStopsTheDownloadWithWhatWasStoredKept() throws {
        let world = try StoreWorld()
        let refused = Script([
            "subscriber 2026-11-18": [Self.reply(.file(Self.file(day: "2026-11-18")))],
            "subscriber 2026-11-19": [Self.reply(.refused(status: 401, code: "NOT_AUTHORIZED", detail: "bad token"))],
        ])
        #expect(throws: AppleReportDownloader.Stopped.self) {
            try downloader(world, refused).download(Self.days) { _ in }
        }
        #expect(refused.asked.withLock { $0 } == ["subscriber 2026-11-18", "subscriber 2026-11-19"])

        // The answer that spends the hour's last request is kept (its file stored); the next report is not asked for.
        let spent = Script([
            "subscriber 2026-11-19": [Self.reply(.file(Self.file(day: "2026-11-19")), remaining: 0)]
        ])
        let error = #expect(throws: AppleReportDownloader.Stopped.self) {
            try downloader(world, spent).download(Self.days) { _ in }
        }
        #expect(error?.description.contains("hourly request budget") == true)
        #expect(spent.asked.withLock { $0 } == ["subscriber 2026-11-19"])
        #expect(
            try world.connection.queryFirst("SELECT count(*) AS n FROM apple_report_files")?.decode("n", as: Int.self)
                == 2
        )

        // Spent on the download's last report: nothing is left to stop, so it ends as usual.
        let lastOne = Script(["subscriber 2026-11-20": [Self.reply(.noSales, remaining: 0)]])
        let outcomes = try downloader(world, lastOne).download(Self.days) { _ in }
        #expect(outcomes.map(\.result) == [.alreadyStored, .alreadyStored, .noSales])
    }

    @Test func aFileThatDoesNotReadStoresNothingAndSaysWhy() throws {
        let world = try StoreWorld()
        let script = Script([
            "subscriber 2026-11-18": [Self.reply(.file(Array("not\ta\treport\n".utf8)))],
            "subscriber 2026-11-19": [Self.reply(.noSales)],
            "subscriber 2026-11-20": [Self.reply(.noSales)],
        ])
        let outcomes = try downloader(world, script).download(Self.days) { _ in }
        #expect(outcomes[0].isFailure, "\(outcomes[0])")
        #expect(
            try world.connection.queryFirst("SELECT count(*) AS n FROM apple_report_files")?.decode("n", as: Int.self)
                == 0
        )
    }
}
