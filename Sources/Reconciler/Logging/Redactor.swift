import Foundation

/// Masks registered secret values in any text about to leave the process (log lines, error messages).
public final class Redactor: @unchecked Sendable {
    public static let shared = Redactor()
    // Guarded by `lock`; registration happens at start-up, reads on every log line.
    private var secrets: [String] = []
    private let lock = NSLock()

    /// Registers a value that must never be printed. Values shorter than 4 characters are ignored
    /// (masking them would garble ordinary text).
    public func register(_ secret: String) {
        guard secret.count >= 4 else { return }
        lock.lock()
        defer { lock.unlock() }
        if !secrets.contains(secret) { secrets.append(secret) }
    }

    public func redact(_ text: String) -> String {
        lock.lock()
        let current = secrets
        lock.unlock()
        var result = text
        for secret in current where result.contains(secret) {
            result = result.replacingOccurrences(of: secret, with: "<redacted>")
        }
        return result
    }
}
