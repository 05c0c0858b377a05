import AppStoreClient
import ReceiptDomain

/// verifyReceipt's view of one answer (`SourceVerification.Answer`): the exchange, the decision made off the
/// pipeline's queue when Apple's answer allowed one, and the plan's next step (with the plan as it stands after it).
struct VerifyAnswer: Sendable {
    let attempt: VerifyAttemptResult
    let decision: Decision?
    let plan: VerificationAttempt
    let step: VerificationAttempt.Step
}
