import Foundation
import TestSupport

/// Reads a JSON Lines file of the simulator's export (`truth.jsonl`, `purchases.jsonl`, ...): one object per line,
/// blank lines skipped.
enum JSONLines {
    static func read(_ url: URL) throws -> [[String: Any]] {
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw FixtureError("cannot read \(url.path)")
        }
        return try data.split(separator: UInt8(ascii: "\n")).compactMap {
            try JSONSerialization.jsonObject(with: Data($0)) as? [String: Any]
        }
    }
}
