/// What a one-process run holds of its run row while it works it (docs/architecture.md, "The run lock"): the
/// `resume_count` it took the run with, which fences every batch and the finish, and the requests to Apple the
/// run's earlier sessions counted, which each batch adds to (docs/architecture.md, "Requests counted with each
/// batch").
struct RunOwnership: Sendable {
    let resumeCount: Int64
    let statsBase: AppleRequestStats
}
