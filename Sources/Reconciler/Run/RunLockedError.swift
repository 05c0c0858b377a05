/// Another run holds the reconciler's advisory lock: exit 75 ("try again later"), naming that run.
public struct RunLockedError: Error, CustomStringConvertible, ExitCodeProviding, Sendable {
    public let holderRunId: Int64?
    public let holderDetail: String?

    public var description: String {
        if let id = holderRunId {
            return "another run holds the lock: run \(id)\(holderDetail.map { " (\($0))" } ?? ""); try again later"
        }
        return "another run holds the lock (it has not recorded its run id yet); try again later"
    }

    public var exitCode: ReconcilerExitCode { .locked }
}
