// libFuzzer entry point for the stored-receipt reader: app receipts (PKCS#7 in BER/DER, indefinite lengths)
// and iOS 6 transaction receipts. Not a SwiftPM target: scripts/fuzz compiles this file with
// Sources/AppStoreSignedData/Receipt/*.swift against swift-asn1 (`swiftc -sanitize=fuzzer`). Any trap
// (crash, overflow, out-of-bounds) or broken invariant is a finding.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func appReceiptFuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))

    // 1. The input as receipt bytes, and as the base64 text an app would store.
    let fromBytes = Result { () throws(AppReceiptError) in try StoredReceipt.parse(bytes: bytes) }
    let fromText = Result { () throws(AppReceiptError) in
        try StoredReceipt.parse(base64: Data(bytes).base64EncodedString())
    }
    check(fromBytes == fromText, "bytes and their base64 read differently")
    // 2. The input itself as stored text (mostly not base64: must be a named error, never a trap).
    _ = try? StoredReceipt.parse(base64: String(decoding: bytes, as: UTF8.self))

    if case .success(let receipt) = fromBytes {
        check(!receipt.signatureChecked, "claims a checked signature")
        if receipt.kind == .transactionReceipt {
            check(receipt.inApp.count == 1, "a transaction receipt holds one record")
        }
        check((try? StoredReceipt.parse(bytes: bytes)) == receipt, "parse is not deterministic")
    }
    if case .failure(let error) = fromBytes {
        check(!error.detail.isEmpty, "an error without a detail")
    }
    return 0
}

/// Traps (a libFuzzer finding) when `condition` is false.
private func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError("invariant violated: \(message())") }
}
