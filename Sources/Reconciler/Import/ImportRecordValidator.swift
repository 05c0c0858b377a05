import CivilTime
import Foundation
import ReceiptDomain

/// Checks the fields of one import record and builds the `ImportRecord`; pure, shared by
/// the JSON Lines and CSV paths of `ImportParser`.
enum ImportRecordValidator {
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

        if transactionId.unicodeScalars.contains(where: { $0.properties.isWhitespace }) {
            return failure("original_transaction_id", .invalidValue, "\(quoted(transactionId)) contains whitespace")
        }
        if let problem = base64Problem(receipt) {
            return failure("latest_receipt", .invalidReceipt, problem)
        }
        let expiresAt: Date
        switch RFC3339.parseStrict(expiresText) {
        case .success(let date):
            expiresAt = date
        case .failure(let failure):
            let reason = failure.reason.map { ": \($0)" } ?? ""
            return .failure(
                ImportLineError(
                    line: line,
                    field: "expires_at",
                    code: .invalidTimestamp,
                    problem: "\(quoted(expiresText)) is not an RFC 3339 timestamp\(reason)"
                )
            )
        }
        var environment: AppleEnvironment?
        if let text = values["environment"] {
            guard let match = AppleEnvironment(appleValue: text) else {
                return failure("environment", .invalidValue, "\(quoted(text)) is not Production or Sandbox")
            }
            environment = match
        }
        if let currency = values["currency"], currency.range(of: "^[A-Z]{3}$", options: .regularExpression) == nil {
            return failure("currency", .invalidValue, "\(quoted(currency)) is not an ISO 4217 code like USD")
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
                currency: values["currency"]
            )
        )
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
