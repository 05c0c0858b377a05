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
        let handle = try Self.open(path)
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

        var lineNumber = 0
        try Self.forEachLine(of: handle) { bytes, tooLong in
            lineNumber += 1
            guard let notification = verifiedNotification(in: bytes, tooLong: tooLong) else { return }
            result.lines += 1
            switch notification {
            case .failure(let refusal):
                result.refused.append(.init(line: lineNumber, reason: refusal.message))
            case .success(let verified):
                batch.append(verified)
                if batch.count >= batchSize { try flush() }
            }
        }
        try flush()
        result.unknownSubscriptions = unknown.sorted()
        return result
    }

    /// Standard input for `-`, else the file at `path`.
    private static func open(_ path: String) throws -> FileHandle {
        if path == "-" { return FileHandle.standardInput }
        guard let opened = FileHandle(forReadingAtPath: path) else {
            throw UsageError("\(path): cannot open the file")
        }
        return opened
    }

    /// Streams `handle` and calls `body` with each line, without its newline; the last line may lack one. A line
    /// longer than `maximumLineBytes` is not kept: `body` gets it empty, with `tooLong` true.
    private static func forEachLine(
        of handle: FileHandle,
        _ body: (_ bytes: ArraySlice<UInt8>, _ tooLong: Bool) throws -> Void
    ) throws {
        var pending: [UInt8] = []
        var skippingLongLine = false
        while true {
            let chunk = try handle.read(upToCount: 1 << 16) ?? Data()
            if chunk.isEmpty { break }
            for byte in chunk {
                if byte == UInt8(ascii: "\n") {
                    try body(pending[...], skippingLongLine)
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
        if !pending.isEmpty || skippingLongLine { try body(pending[...], skippingLongLine) }
    }

    /// One line's notification, verified, or the reason it is refused; nil for a blank line.
    private func verifiedNotification(
        in bytes: ArraySlice<UInt8>,
        tooLong: Bool
    ) -> Result<VerifiedNotification, UsageError>? {
        if tooLong {
            return .failure(UsageError("longer than \(Self.maximumLineBytes) bytes: not a notification"))
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            return .failure(UsageError("not UTF-8 text"))
        }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { return nil }
        switch Self.signedPayload(in: trimmed) {
        case .failure(let reason):
            return .failure(reason)
        case .success(let payload):
            do {
                return .success(try verifier.verify(payload))
            } catch {
                return .failure(UsageError("refused: \(error)"))
            }
        }
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
