import Foundation

/// A parsed verifyReceipt response body.
///
/// Parsing is tolerant of Apple's loose typing (numbers as strings and vice versa), unknown
/// fields and missing optional fields, and strict about what makes a body a verifyReceipt
/// response at all (a JSON object with a `status`). Linear in the body size.
public struct VerifyReceiptResponse: Sendable, Equatable {
    public var status: Int
    /// Apple's `environment`, when present and recognisable.
    public var environment: AppleEnvironment?
    public var receipt: ReceiptInfo?
    /// nil when the member is absent (then `receipt.in_app` is the fallback source).
    public var latestReceiptInfo: [ReceiptTransaction]?
    /// The newest base64 receipt: stored in place of the old one.
    public var latestReceipt: String?
    public var pendingRenewalInfo: [PendingRenewalInfo]
    /// `is_retryable` or `is-retryable`, when present and readable as a flag.
    public var isRetryable: Bool?

    public init(
        status: Int,
        environment: AppleEnvironment? = nil,
        receipt: ReceiptInfo? = nil,
        latestReceiptInfo: [ReceiptTransaction]? = nil,
        latestReceipt: String? = nil,
        pendingRenewalInfo: [PendingRenewalInfo] = [],
        isRetryable: Bool? = nil
    ) {
        self.status = status
        self.environment = environment
        self.receipt = receipt
        self.latestReceiptInfo = latestReceiptInfo
        self.latestReceipt = latestReceipt
        self.pendingRenewalInfo = pendingRenewalInfo
        self.isRetryable = isRetryable
    }

    /// The transactions the engine decides from: `latest_receipt_info` when present and non-empty,
    /// otherwise `receipt.in_app`.
    public var subscriptionTransactions: [ReceiptTransaction] {
        if let latest = latestReceiptInfo, !latest.isEmpty { return latest }
        return receipt?.inApp ?? []
    }

    /// Parses a verifyReceipt response body.
    ///
    /// Only the top-level `status` is required. Error bodies (e.g. `{"status": 21002}`) parse fine.
    /// Throws `ReceiptParseError` naming the byte offset (not JSON) or the field (wrong type).
    public static func parse(_ body: some Collection<UInt8>) throws(ReceiptParseError) -> VerifyReceiptResponse {
        let root: JSONValue
        do {
            root = try JSONParser.parse(bytes: body)
        } catch {
            throw ReceiptParseError(code: .notJSON, byteOffset: error.offset, detail: error.message)
        }
        return try parse(json: root)
    }

    /// Parses an already parsed JSON document.
    public static func parse(json root: JSONValue) throws(ReceiptParseError) -> VerifyReceiptResponse {
        guard case .object(let members) = root else {
            throw ReceiptParseError(code: .notAnObject, detail: "top-level JSON is \(root.typeName), not an object")
        }
        let fields = JSONFields(members: members, path: "")
        guard let statusValue = members["status"], statusValue != .null else {
            throw ReceiptParseError(code: .missingStatus, field: "status", detail: "missing")
        }
        guard let status = try statusValue.looseInt("status") else {
            throw ReceiptParseError(code: .missingStatus, field: "status", detail: "empty")
        }
        _ = try ValueBounds.integer(status, field: "status")
        // Unrecognised environment spellings are tolerated (nil), not fatal.
        let environment = (try? fields.string("environment")).flatMap { $0 }.flatMap(AppleEnvironment.init(appleValue:))
        let receipt = try fields.object("receipt").map { (object) throws(ReceiptParseError) in
            try ReceiptInfo(fields: object)
        }
        let latest = try fields.objects("latest_receipt_info")?.map { (entry) throws(ReceiptParseError) in
            try ReceiptTransaction(fields: entry)
        }
        let pending =
            try fields.objects("pending_renewal_info")?.map { (entry) throws(ReceiptParseError) in
                try PendingRenewalInfo(fields: entry)
            } ?? []
        // An unreadable retry flag is treated as absent (classification then retries).
        let retryable =
            (try? fields.bool("is_retryable")).flatMap { $0 } ?? (try? fields.bool("is-retryable")).flatMap { $0 }
        return VerifyReceiptResponse(
            status: status,
            environment: environment,
            receipt: receipt,
            latestReceiptInfo: latest,
            latestReceipt: try fields.string("latest_receipt", maxLength: ValueBounds.maxReceiptLength),
            pendingRenewalInfo: pending,
            isRetryable: retryable
        )
    }
}
