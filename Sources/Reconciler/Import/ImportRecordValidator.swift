import CivilTime
import Foundation
import ReceiptDomain

/// Checks the fields of one import record and builds the `ImportRecord`; pure, shared by
/// the JSON Lines and CSV paths of `ImportParser`. A value the database cannot store (a NUL character, an id
/// too long for its index, a date outside PostgreSQL's range: `StorableValueCheck`) is a line error like any
/// other (docs/operations.md, "Backfill, import, explain").
enum ImportRecordValidator {
    /// The ids checked against `StorableValueCheck.indexedTextProblem`, in the order they are checked.
    static let idFields = ["user_id", "original_transaction_id", "product_id", "bundle_id"]

    /// `values`: non-empty field values by name; `present`: names that appeared (even empty).
    static func validate(
        values: [String: String],
        present: Set<String>,
        line: Int
    ) -> Result<
        ImportRecord, ImportLineError
    > {
        func failure(
            _ field: String,
            _ code: ImportLineError.Code,
            _ problem: String
        ) -> Result<
            ImportRecord, ImportLineError
        > {
            .failure(ImportLineError(line: line, field: field, code: code, problem: problem))
        }
        for field in ImportParser.requiredFields where values[field] == nil {
            return present.contains(field)
                ? failure(field, .emptyField, "must not be empty")
                : failure(field, .missingField, "is missing")
        }
        guard let userId = values["user_id"], let productId = values["product_id"],
            let transactionId = values["original_transaction_id"], let receipt = values["latest_receipt"],
            let expiresText = values["expires_at"]
        else { return failure("user_id", .missingField, "is missing") }
        if let (field, code, problem) = fieldProblem(values) { return failure(field, code, problem) }
        let expiresAt: Date
        switch expiry(expiresText) {
        case .failure(let problem): return failure("expires_at", problem.code, problem.text)
        case .success(let date): expiresAt = date
        }
        var environment: AppleEnvironment?
        if let text = values["environment"] {
            guard let match = AppleEnvironment(appleValue: text) else {
                return failure("environment", .invalidValue, "\(quoted(text)) is not Production or Sandbox")
            }
            environment = match
        }
        return .success(
            ImportRecord(
                line: line,
                userId: userId,
                productId: productId,
                originalTransactionId: transactionId,
                latestReceipt: receipt,
                expiresAt: expiresAt,
                environment: environment,
                bundleId: values["bundle_id"],
                currency: values["currency"],
                appAccountToken: values["app_account_token"]?.lowercased()
            )
        )
    }

    /// The first field of `values` that a rule refuses: an id the database cannot store, whitespace in the
    /// transaction id, a product id against `ProductIdRule`, a receipt that is not base64, a currency that is
    /// not in `ISO4217Currency`; nil when none is.
    static func fieldProblem(_ values: [String: String]) -> (String, ImportLineError.Code, String)? {
        for field in idFields {
            if let value = values[field], let problem = StorableValueCheck.indexedTextProblem(value) {
                return (field, .unstorableValue, problem)
            }
        }
        if let id = values["original_transaction_id"], id.unicodeScalars.contains(where: { $0.properties.isWhitespace })
        {
            return ("original_transaction_id", .invalidValue, "\(quoted(id)) contains whitespace")
        }
        if let productId = values["product_id"], let problem = ProductIdRule.problem(productId) {
            return ("product_id", .invalidValue, problem)
        }
        if let receipt = values["latest_receipt"], let problem = base64Problem(receipt) {
            return ("latest_receipt", .invalidReceipt, problem)
        }
        if let currency = values["currency"], let problem = ISO4217Currency.problem(currency) {
            return ("currency", .invalidValue, problem)
        }
        if let token = values["app_account_token"], UUID(uuidString: token) == nil {
            return (
                "app_account_token", .invalidValue, "\(quoted(token)) is not a UUID (Apple's appAccountToken is one)"
            )
        }
        return nil
    }

    struct ExpiryProblem: Error {
        let code: ImportLineError.Code
        let text: String
    }

    /// `text` as a strict RFC 3339 timestamp PostgreSQL can store.
    static func expiry(_ text: String) -> Result<Date, ExpiryProblem> {
        switch RFC3339.parseStrict(text) {
        case .success(let date):
            guard StorableValueCheck.isStorable(date) else {
                return .failure(
                    ExpiryProblem(
                        code: .unstorableValue,
                        text: "\(quoted(text)) is outside PostgreSQL's timestamp range"
                    )
                )
            }
            return .success(date)
        case .failure(let failure):
            let reason = failure.reason.map { ": \($0)" } ?? ""
            return .failure(
                ExpiryProblem(code: .invalidTimestamp, text: "\(quoted(text)) is not an RFC 3339 timestamp\(reason)")
            )
        }
    }

    /// A value for a message: quoted, escaped, and cut to 40 characters.
    static func quoted(_ value: String) -> String {
        let cut = value.count > 40 ? String(value.prefix(40)) + "…" : value
        return cut.debugDescription
    }

    /// Why `receipt` is not standard base64 (alphabet `A-Za-z0-9+/`, `=` padding only at the
    /// end), or nil. Mentions offsets, code points and the length, never the content.
    static func base64Problem(_ receipt: String) -> String? {
        let bytes = receipt.utf8
        var offset = 0
        var padding = 0
        for byte in bytes {
            let isAlphabet =
                (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
                || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "/")
            if byte == UInt8(ascii: "=") {
                padding += 1
            } else if !isAlphabet || padding > 0 {
                let what =
                    isAlphabet ? "data after '=' padding" : "invalid character \(codePoint(at: offset, in: receipt))"
                return "is not base64: \(what) at offset \(offset) (length \(bytes.count))"
            }
            offset += 1
        }
        if padding > 2 || (padding > 0 && bytes.count % 4 != 0) || (padding == 0 && bytes.count % 4 == 1) {
            return "is not base64: bad length or padding (length \(bytes.count))"
        }
        return nil
    }

    private static func codePoint(at utf8Offset: Int, in text: String) -> String {
        let index = text.utf8.index(text.utf8.startIndex, offsetBy: utf8Offset)
        guard let scalar = text.unicodeScalars[index...].first else { return "" }
        return String(format: "U+%04X", scalar.value)
    }
}
