/// What a scenario of `PopulationGenerator` decides about one receipt family before the family is assembled: its
/// subscriptions, when the app stored its receipt, and the family's oddities (each named after the `ReceiptFamily`
/// field it becomes). A draft starts as an ordinary family: stored at the anchor, production, the app's own bundle.
struct FamilyDraft {
    var plans: [SubscriptionPlan] = []
    /// `storedReceiptAt`.
    var stored: Int64
    var sandbox = false
    /// `bundleId`: the bundle inside the receipt.
    var bundle: String
    /// `bytesPerTransaction`.
    var bytesPerTxn = ReceiptFamily.defaultBytesPerTransaction
    var fixedStatus: Int?
    /// `malformedStoredReceipt`.
    var malformed = false
    var appStoredExpiry: Int64?
    /// `implausibleValue`.
    var implausible: ImplausibleValue?
    var priorRunAt: Int64?

    init(stored: Int64, bundle: String) {
        self.stored = stored
        self.bundle = bundle
    }

    /// One subscription, whose receipt the app stored at `storedAt`.
    mutating func single(_ plan: SubscriptionPlan, storedAt: Int64) {
        plans = [plan]
        stored = storedAt
    }
}
