import Foundation

extension ReconciliationRunner {
    /// How the run ended.
    public struct Summary: Sendable {
        public var runId: Int64
        public var status: RunStatus
        public var exitCode: ReconcilerExitCode
        public var dryRun: Bool
        public var asOf: Date
        public var due: Int
        public var done: Int
        public var pending: Int
        public var outcomes: [ItemOutcome: Int]
        public var stats: AppleRequestStats
        public var message: String?
        /// The report folder written for this run, when one was asked for.
        public var reportPath: String?
    }
}
