/// What preparing a run found (`RunCoordination.prepare`): how many subscriptions its scan selected, and why reading
/// notification history failed when Apple kept failing (the run then ends partial; nil when it worked or was not read).
struct RunPreparation: Sendable {
    var due: Int
    var notificationFailure: String?
}
