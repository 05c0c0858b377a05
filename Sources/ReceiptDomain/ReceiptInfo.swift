/// The decoded `receipt` object of a verifyReceipt response (the app receipt itself).
///
/// Only the parts the reconciler needs: the bundle id (checked against configuration) and `in_app[]`
/// (the fallback when `latest_receipt_info` is missing).
public struct ReceiptInfo: Sendable, Equatable {
    public var bundleId: String?
    public var applicationVersion: String?
    public var receiptType: String?
    public var inApp: [ReceiptTransaction]

    public init(
        bundleId: String? = nil,
        applicationVersion: String? = nil,
        receiptType: String? = nil,
        inApp: [ReceiptTransaction] = []
    ) {
        self.bundleId = bundleId
        self.applicationVersion = applicationVersion
        self.receiptType = receiptType
        self.inApp = inApp
    }

    init(fields: JSONFields) throws(ReceiptParseError) {
        self.init(
            bundleId: try fields.string("bundle_id"),
            applicationVersion: try fields.string("application_version"),
            receiptType: try fields.string("receipt_type"),
            inApp: try fields.objects("in_app")?.map { (entry) throws(ReceiptParseError) in
                try ReceiptTransaction(fields: entry)
            } ?? []
        )
    }
}
