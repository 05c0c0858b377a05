import ReceiptDomain

extension ISO4217Currency {
    /// Why `code` is not an accepted currency, or nil.
    public static func problem(_ code: String) -> String? {
        codes.contains(code) ? nil : "\(ImportRecordValidator.quoted(code)) is not an ISO 4217 code like USD"
    }
}
