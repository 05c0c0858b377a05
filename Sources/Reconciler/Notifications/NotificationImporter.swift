import AppStoreSignedData
import Foundation
import Postgres

/// `notifications import`: signed notification payloads an app's own webhook stored, one a line (the bare
/// `signedPayload`, or a JSON object `{"signedPayload": "..."}`), verified as notification history's are
/// and stored once each with `source` `import` and no run. The next run takes them over
/// (`first_seen_run_id`) and makes the subscriptions they name due (docs/architecture.md, "Notification
/// history"). A line that does not verify is refused with its line number and reason; the others are
/// stored. Streams the file; commits every `batchSize` notifications.
public struct NotificationImporter {
    public let connectionString: String
    public let verifier: NotificationPayloadVerifier
    public let batchSize: Int

    /// The longest line read (a notification is a few kilobytes; Apple's largest are far below this).
    public static let maximumLineBytes = 1 << 20

    public init(
        connectionString: String,
        roots: TrustedRoots,
        bundleId: String,
        appAppleId: Int64?,
        batchSize: Int = 200
    ) {
        self.connectionString = connectionString
        self.verifier = NotificationPayloadVerifier(
            roots: roots,
            bundleId: bundleId,
            appAppleId: appAppleId,
            environment: nil
        )
        self.batchSize = max(1, batchSize)
    }

    /// - Throws: `UsageError` when the file cannot be read; database errors.
    public func importFile(_ path: String) throws -> NotificationImportResult {
        let handle: FileHandle
        if path == "-" {
            handle = FileHandle.standardInput
        } else {
            guard let opened = FileHandle(forReadingAtPath: path) else {
                throw UsageError("\(path): cannot open the file")
            }
            handle = opened
        }
        defer { if path != "-" { try? handle.close() } }
        let connection = try PostgresConnection(connectionString)
        defer { connection.close() }

        var result = NotificationImportResult()
        var unknown = Set<String>()
        var batch: [VerifiedNotification] = []
        func flush() throws {
            guard !batch.isEmpty else { return }
            let stored = try connection.transaction { conn in
                try NotificationStore.insert(batch, source: "import", runId: nil, conn)
            }
            result.stored += stored.inserted.count
            result.alreadyStored += batch.count - stored.inserted.count
            unknown.formUnion(stored.unknownSubscriptions)
            batch.removeAll(keepingCapacity: true)
        }

        var pending: [UInt8] = []
        var lineNumber = 0
        var skippingLongLine = false
        func handleLine(_ bytes: ArraySlice<UInt8>, tooLong: Bool) throws {
            lineNumber += 1
            if tooLong {
                result.lines += 1
                result.refused.append(
                    .init(line: lineNumber, reason: "longer than \(Self.maximumLineBytes) bytes: not a notification")
                )
                return
            }
            guard let text = String(validating: bytes, as: UTF8.self) else {
                result.lines += 1
                result.refused.append(.init(line: lineNumber, reason: "not UTF-8 text"))
                return
            }
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !trimmed.isEmpty else { return }
            result.lines += 1
            switch Self.signedPayload(in: trimmed) {
            case .failure(let reason):
                result.refused.append(.init(line: lineNumber, reason: reason.message))
            case .success(let payload):
                do {
                    batch.append(try verifier.verify(payload))
                } catch {
                    result.refused.append(.init(line: lineNumber, reason: "refused: \(error)"))
                }
                if batch.count >= batchSize { try flush() }
            }
        }

        while true {
            let chunk = try handle.read(upToCount: 1 << 16) ?? Data()
            if chunk.isEmpty { break }
            for byte in chunk {
                if byte == UInt8(ascii: "\n") {
                    try handleLine(pending[...], tooLong: skippingLongLine)
                    pending.removeAll(keepingCapacity: true)
                    skippingLongLine = false
                } else if !skippingLongLine {
                    pending.append(byte)
                    if pending.count > Self.maximumLineBytes {
                        skippingLongLine = true
                        pending.removeAll(keepingCapacity: true)
                    }
                }
            }
        }
        if !pending.isEmpty || skippingLongLine { try handleLine(pending[...], tooLong: skippingLongLine) }
        try flush()
        result.unknownSubscriptions = unknown.sorted()
        return result
    }

    /// The compact JWS of one line: the line itself, or the `signedPayload` member of a JSON object.
    static func signedPayload(in line: String) -> Result<String, UsageError> {
        if line.hasPrefix("{") {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                return .failure(UsageError("a JSON line that does not parse as an object"))
            }
            guard let payload = object["signedPayload"] as? String, !payload.isEmpty else {
                return .failure(UsageError("a JSON object without a \"signedPayload\" string"))
            }
            return .success(payload)
        }
        if line.hasPrefix("\"") {
            return .failure(UsageError("a quoted string: put the payload bare or in {\"signedPayload\": ...}"))
        }
        return .success(line)
    }
}
