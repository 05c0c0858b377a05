import AppStoreSignedData
import Foundation

/// `explain --receipt`: the transaction ids in a stored receipt, read offline. The receipt's signature is
/// not checked (`signature_checked: false`, docs/signed-data.md).
public enum StoredReceiptExplainer {
    /// - Parameter contents: the file as stored (base64 text), or the raw receipt bytes.
    public static func explain(contents: [UInt8]) throws(AppReceiptError) -> ExplainJSON {
        let receipt: StoredReceipt
        if contents.first == 0x30 {
            receipt = try StoredReceipt.parse(bytes: contents)
        } else {
            receipt = try StoredReceipt.parse(base64: String(decoding: contents, as: UTF8.self))
        }
        let records = receipt.inApp.map { record in
            ExplainJSON.object([
                ("transaction_id", .string(record.transactionId)),
                ("original_transaction_id", .string(record.originalTransactionId)),
                ("product_id", .string(record.productId)),
                ("purchase_date", .date(record.purchaseDate)),
                ("expires_date", .date(record.expiresDate)),
            ])
        }
        return .object([
            ("bundle_id", .string(receipt.bundleId)),
            ("kind", .string(receipt.kind.rawValue)),
            ("signature_checked", .bool(receipt.signatureChecked)),
            ("in_app", .array(records)),
        ])
    }
}
