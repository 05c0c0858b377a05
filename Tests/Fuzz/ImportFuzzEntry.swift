// libFuzzer entry point for the import parser (JSON Lines and CSV), reading through a pipe: the same
// FileHandle path `renewal-reconciler import -` takes. Not a SwiftPM target: scripts/fuzz compiles this
// file with the parser's sources from Sources/Reconciler/Import (`swiftc -sanitize=fuzzer`).
//
// The first input byte picks the format and the reader's tuning (tiny chunks and a tiny record limit
// reach the chunk-boundary and too-long paths with small inputs); the rest is the file's content.
import Foundation

#if canImport(Glibc)
import Glibc
#endif

@_cdecl("LLVMFuzzerTestOneInput")
public func importFuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size > 0 else { return 0 }
    let control = data[0]
    let content = UnsafeBufferPointer(start: data + 1, count: size - 1)
    // Pipe capacity is 64 KiB; longer inputs would block the writer, and libFuzzer keeps them short.
    guard content.count <= 60_000 else { return 0 }

    let format: ImportFormat?
    switch control & 0x3 {
    case 0: format = .jsonLines
    case 1: format = .csv
    default: format = nil  // sniffed from the content
    }
    let chunkSize = (control & 0x4) != 0 ? 16 : 64 << 10
    let maxRecordBytes = (control & 0x8) != 0 ? 64 : 8 << 20

    var fds: [Int32] = [0, 0]
    guard pipe(&fds) == 0 else { return 0 }
    var offset = 0
    while offset < content.count {
        let written = write(fds[1], content.baseAddress! + offset, content.count - offset)
        if written <= 0 { break }
        offset += written
    }
    close(fds[1])
    let handle = FileHandle(fileDescriptor: fds[0], closeOnDealloc: true)

    do {
        let parser = try ImportParser(
            fileHandle: handle,
            name: "fuzz-input",
            format: format,
            options: ImportParser.Options(maxRecordBytes: maxRecordBytes, chunkSize: chunkSize)
        )
        // Invariants (a violation traps, so libFuzzer records the input): line numbers start at 1 and never
        // go back; a record that validated has its required fields; an id is accepted at most once.
        var count = 0
        var lastLine = 0
        var accepted: Set<String> = []
        while let result = parser.next() {
            let line: Int
            switch result {
            case .success(let record):
                line = record.line
                check(
                    !record.userId.isEmpty && !record.productId.isEmpty && !record.latestReceipt.isEmpty,
                    "an accepted record has an empty required field"
                )
                check(
                    !record.originalTransactionId.unicodeScalars.contains { $0.properties.isWhitespace },
                    "an accepted id contains whitespace"
                )
                check(accepted.insert(record.originalTransactionId).inserted, "a duplicate id was accepted")
            case .failure(let error):
                line = error.line
                check(!error.description.isEmpty, "an error without a description")
                check(error.description.utf8.count < 4_096, "an error message echoes a whole record")
            }
            check(line >= 1 && line >= lastLine, "line \(line) after line \(lastLine)")
            lastLine = line
            count += 1
            // A parser that never ends is a finding too.
            check(count <= content.count + 2, "more records than input bytes")
        }
        _ = parser.warnings
    } catch {
        _ = error.description
    }
    return 0
}

/// Traps (a libFuzzer finding) when `condition` is false.
private func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError("invariant violated: \(message())") }
}
