import Foundation
import Reconciler

extension TruthComparison.Report {
    /// The human summary the demo and `compare-truth` print: the match line, scenarios not fully matched,
    /// and at most `limit` mismatches.
    public func lines(limit: Int = 20) -> [String] {
        var lines = [
            "match with the simulator's truth: \(matched)/\(compared) (\(String(format: "%.2f", matchRate * 100))%)"
        ]
        let partial = byScenario.filter { $0.value.matched < $0.value.total }.sorted { $0.key < $1.key }
        if !partial.isEmpty {
            lines.append(
                "scenarios not matched: "
                    + partial.map { "\($0.key) \($0.value.matched)/\($0.value.total)" }.joined(separator: ", ")
            )
        }
        for mismatch in mismatches.prefix(limit) { lines.append("  mismatch: \(mismatch)") }
        if mismatchCount > limit { lines.append("  ... \(mismatchCount - limit) more") }
        return lines
    }
}
