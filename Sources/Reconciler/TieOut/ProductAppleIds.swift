/// The first map of the tie-out: a subscription's Apple ID (the Subscriber report's `Subscription Apple ID`) to the
/// product id the ledger holds (docs/tie-out.md, "Products: the Apple ID map").
///
/// The catalog's `apple_id` (`products import`) comes first; an Apple ID it lacks is learnt from the imported
/// Financial reports, whose rows carry the product id (`Vendor Identifier`, detailed: `SKU`) beside `Apple Identifier`.
/// An Apple ID that two Financial rows give two product ids is kept with the first in product-id order and listed in
/// `conflicts`.
public struct ProductAppleIds: Sendable, Equatable {
    /// Where a pair came from.
    public enum Source: String, Sendable, Codable {
        case catalog
        case financialReport = "financial_report"
    }

    public struct Entry: Sendable, Equatable {
        public var productId: String
        public var source: Source
    }

    public private(set) var entries: [String: Entry] = [:]
    /// Apple IDs given more than one product id, with every product id named.
    public private(set) var conflicts: [String: [String]] = [:]

    public init(catalog: [(appleId: String, productId: String)], financial: [(appleId: String, productId: String)]) {
        for pair in catalog.sorted(by: { ($0.appleId, $0.productId) < ($1.appleId, $1.productId) }) {
            add(pair.appleId, pair.productId, .catalog)
        }
        for pair in financial.sorted(by: { ($0.appleId, $0.productId) < ($1.appleId, $1.productId) }) {
            if let known = entries[pair.appleId], known.source == .catalog { continue }
            add(pair.appleId, pair.productId, .financialReport)
        }
    }

    private mutating func add(_ appleId: String, _ productId: String, _ source: Source) {
        guard let known = entries[appleId] else {
            entries[appleId] = Entry(productId: productId, source: source)
            return
        }
        guard known.productId != productId else { return }
        var named = conflicts[appleId] ?? [known.productId]
        if !named.contains(productId) { named.append(productId) }
        conflicts[appleId] = named
    }

    /// The product id of `appleId`, or nil when no catalog row or Financial report names it.
    public func productId(of appleId: String) -> String? { entries[appleId]?.productId }
}
