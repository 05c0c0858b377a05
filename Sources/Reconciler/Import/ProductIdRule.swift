import Foundation

/// The one rule for a product id, in the price catalog (`products import`) and in the subscriptions import
/// (`import`); docs/operations.md, "The price catalog". App Store Connect's product ids are letters, digits,
/// dots and underscores; this refuses what cannot be one and what the database cannot store:
/// - a NUL character, or more than `StorableValueCheck.maxIndexedTextBytes` bytes (the column is indexed);
/// - whitespace (a space, a tab, a line break: a copy-and-paste slip, never part of an id);
/// - another control character.
public enum ProductIdRule {
    /// What is wrong with the non-empty `productId`, or nil when it is acceptable.
    public static func problem(_ productId: String) -> String? {
        if let problem = StorableValueCheck.indexedTextProblem(productId) { return problem }
        let quoted = ImportRecordValidator.quoted(productId)
        if productId.unicodeScalars.contains(where: { $0.properties.isWhitespace }) {
            return "\(quoted) contains whitespace"
        }
        if let control = productId.unicodeScalars.first(where: { $0.properties.generalCategory == .control }) {
            return "\(quoted) contains the control character \(String(format: "U+%04X", control.value))"
        }
        return nil
    }
}
