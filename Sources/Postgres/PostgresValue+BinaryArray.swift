/// Text arrays sent in PostgreSQL's binary array format (`array_recv`): a batch's receipt array runs to megabytes,
/// and the text format's `array_in` scans every byte of it several times on the server (counting, unquoting, then
/// each element's `textin`: about 30 µs per 8 KB receipt, measured), where `array_recv` copies each element once.
/// The declared type stays `text[]` (OID 1009), so what a statement receives is the same value.
extension PostgresValue {
    /// Whether this parameter is sent in binary: a text array of text elements and NULLs only.
    var sendsBinary: Bool {
        guard case .array(let elements, let oid) = self, oid == PostgresTypeOID.textArray else { return false }
        return elements.allSatisfy {
            switch $0 {
            case .text, .null: true
            default: false
            }
        }
    }

    /// Appends the binary array (`sendsBinary` must hold): dimensions, a NULL flag, the element type, then each
    /// element's length (-1 for NULL) and UTF-8 bytes, integers big-endian. A NUL in an element is refused, as in
    /// the text format.
    func appendBinaryTextArray(to out: inout [UInt8]) throws {
        guard case .array(let elements, _) = self else { return }
        func int32(_ value: Int32) {
            withUnsafeBytes(of: value.bigEndian) { out.append(contentsOf: $0) }
        }
        let hasNull = elements.contains { if case .null = $0 { true } else { false } }
        int32(elements.isEmpty ? 0 : 1)
        int32(hasNull ? 1 : 0)
        int32(Int32(bitPattern: PostgresTypeOID.text))
        if !elements.isEmpty {
            int32(Int32(elements.count))
            int32(1)
        }
        for element in elements {
            guard case .text(var text) = element else {
                int32(-1)
                continue
            }
            try Self.refuseNUL(text)
            text.withUTF8 { bytes in
                int32(Int32(bytes.count))
                out.append(contentsOf: bytes)
            }
        }
    }
}
