import Foundation
import Logging

/// The log output of `renewal-reconciler`: readable lines for a terminal or the journal
/// (`--log-format text`, the default) or one JSON object per line for log shippers (`--log-format json`).
///
/// Everything goes to standard error; standard output is kept for command results (`explain`, `runs`).
/// Callers never log secrets or whole receipts; as a second line of defence the handler masks any
/// value registered with `ReconcilerLogHandler.redact(_:)`.
public struct ReconcilerLogHandler: LogHandler {
    public enum Format: String, Sendable, CaseIterable {
        case text, json
    }

    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    private let label: String
    private let format: Format

    public init(label: String, format: Format, level: Logger.Level) {
        self.label = label
        self.format = format
        self.logLevel = level
    }

    /// Installs this handler for the whole process. Call once, before the first `Logger` is made.
    public static func bootstrap(format: Format, level: Logger.Level) {
        LoggingSystem.bootstrap { label in ReconcilerLogHandler(label: label, format: format, level: level) }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        emit(level: event.level, message: event.message, metadata: event.metadata)
    }

    private func emit(level: Logger.Level, message: Logger.Message, metadata explicit: Logger.Metadata?) {
        var all = metadata
        if let explicit { all.merge(explicit) { $1 } }
        let time = Self.timestamp()
        let text: String
        switch format {
        case .text:
            var line =
                "\(time) \(level.rawValue.uppercased().padding(toLength: 7, withPad: " ", startingAt: 0)) \(message)"
            if !all.isEmpty {
                line +=
                    " "
                    + all.sorted { $0.key < $1.key }.map { "\($0.key)=\(Self.flatten($0.value))" }
                    .joined(separator: " ")
            }
            text = line
        case .json:
            var object: [String: Any] = [
                "time": time, "level": level.rawValue, "message": "\(message)",
                "logger": label,
            ]
            for (key, value) in all { object[key] = Self.jsonValue(value) }
            if let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]),
                let json = String(data: data, encoding: .utf8)
            {
                text = json
            } else {
                text = "{\"level\":\"\(level.rawValue)\",\"message\":\"unencodable log line\"}"
            }
        }
        Self.write(Redactor.shared.redact(text) + "\n")
    }

    private static let lock = NSLock()
    private static func write(_ line: String) {
        lock.lock()
        defer { lock.unlock() }
        FileHandle.standardError.write(Data(line.utf8))
    }

    private static func timestamp() -> String {
        var tv = timeval()
        gettimeofday(&tv, nil)
        var t = time_t(tv.tv_sec)
        var parts = tm()
        gmtime_r(&t, &parts)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
            parts.tm_year + 1900,
            parts.tm_mon + 1,
            parts.tm_mday,
            parts.tm_hour,
            parts.tm_min,
            parts.tm_sec,
            Int(tv.tv_usec / 1000)
        )
    }

    private static func flatten(_ value: Logger.MetadataValue) -> String {
        switch value {
        case .string(let s):
            return s.contains(" ") ? "\"\(s)\"" : s
        case .stringConvertible(let c):
            return "\(c)"
        case .array(let a):
            return "[" + a.map(flatten).joined(separator: ",") + "]"
        case .dictionary(let d):
            return "{" + d.sorted { $0.key < $1.key }.map { "\($0.key)=\(flatten($0.value))" }.joined(separator: ",")
                + "}"
        }
    }

    private static func jsonValue(_ value: Logger.MetadataValue) -> Any {
        switch value {
        case .string(let s): return s
        case .stringConvertible(let c):
            if let i = c as? Int { return i }
            if let d = c as? Double { return d }
            if let b = c as? Bool { return b }
            return "\(c)"
        case .array(let a): return a.map(jsonValue)
        case .dictionary(let d): return d.mapValues(jsonValue)
        }
    }
}
