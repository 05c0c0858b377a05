import Foundation
import ReceiptDomain

/// The outcome of one item in a run, as recorded in `reconciliation_items.outcome`: the decision
/// engine's outcomes plus what the pipeline adds (`unresolved`: nothing known, row untouched;
/// `conflict`: the row changed under us and was left as the app wrote it).
public enum ItemOutcome: String, Sendable, CaseIterable, Codable {
    case renewed, unchanged, lapsed, recovered, revoked, changed, rejected, unresolved, conflict
    /// The row's `bundle_id` names no app the run is configured for: Apple was not asked, the row is untouched
    /// (docs/architecture.md, "Several apps").
    case noApp = "no_app"

    public init(_ outcome: DecisionOutcome) {
        switch outcome {
        case .renewed: self = .renewed
        case .unchanged: self = .unchanged
        case .lapsed: self = .lapsed
        case .recovered: self = .recovered
        case .revoked: self = .revoked
        case .changed: self = .changed
        case .rejected: self = .rejected
        }
    }
}

/// What the pipeline hands to the writer for one item.
public struct ItemResult: Sendable {
    public enum Kind: Sendable {
        /// Apple answered and the engine decided (any outcome but rejected): update the row.
        case decided(Decision)
        /// Apple or the engine refused the receipt for good: record why, never touch entitlement.
        /// `invalidReceipt` marks 21002 through the whole retry budget.
        case rejected(VerdictReason, invalidReceipt: Bool)
        /// Nothing known (retries exhausted, run stopped): row untouched, the item stays due.
        case unresolved(String)
        /// The row's `bundle_id` (given) names no configured app: Apple not asked, row untouched, never a
        /// rejection (the receipt may be perfectly good for its own app).
        case noApp(String)
    }

    public let item: WorkItem
    public let kind: Kind
    /// The environment of the last request (or Apple's answer).
    public let environment: AppleEnvironment?
    public let appleStatus: Int?
    /// HTTP requests made for this item (switches and retries included).
    public let attempts: Int

    public var outcome: ItemOutcome {
        switch kind {
        case .decided(let decision): return ItemOutcome(decision.outcome)
        case .rejected: return .rejected
        case .unresolved: return .unresolved
        case .noApp: return .noApp
        }
    }

    public var reason: String? {
        switch kind {
        case .decided(let decision):
            var parts: [String] = []
            if decision.expiryMovedBackwards, let why = decision.expiryMovedBackwardsReason { parts.append(why) }
            parts.append(contentsOf: decision.notes)
            return parts.isEmpty ? nil : parts.joined(separator: "; ")
        case .rejected(let reason, _): return "\(reason.code.rawValue): \(reason)"
        case .unresolved(let why): return why
        case .noApp(let bundleId): return "no app configured for bundle id \(bundleId)"
        }
    }
}

extension ItemResult {
    /// This item as the store records it when its values cannot be stored: `rejected` with `reason`
    /// (`implausible_value`), same item, environment and attempts; Apple's status kept only when it fits an
    /// `integer` column. The subscription row is not touched for it (see `RunStore`).
    func refused(_ reason: VerdictReason) -> ItemResult {
        ItemResult(
            item: item,
            kind: .rejected(reason, invalidReceipt: false),
            environment: environment,
            appleStatus: appleStatus.flatMap { StorableValueCheck.integerRange.contains($0) ? $0 : nil },
            attempts: attempts
        )
    }
}
