/// The deterministic population of receipt families the simulator answers for.
///
/// Everything follows from (`seed`, `subscriptions`, `anchor`, `bundleId`): the same inputs give the same
/// families, ids, timelines and receipt bytes. `anchor` is the instant the scenarios are built around
/// (a "silent renewal" has several periods between its stored receipt and the anchor); serve and export
/// must use the same anchor to describe the same world.
public struct Population: Sendable {
    public let seed: UInt64
    public let anchor: Int64
    public let bundleId: String
    public let foreignBundleId: String
    public let families: [ReceiptFamily]
    public let catalog: ProductCatalog
    public let foreignCatalog: ProductCatalog
    public let subscriptionCount: Int

    public init(seed: UInt64, subscriptions: Int, anchor: Int64, bundleId: String = "com.example.renewals") {
        self.seed = seed
        self.anchor = anchor
        self.bundleId = bundleId
        self.foreignBundleId = bundleId == "com.example.otherapp" ? "com.example.anotherapp" : "com.example.otherapp"
        let catalog = ProductCatalog(bundleId: bundleId, groupBase: 21_000_000 + Int(seed % 900_000) * 10)
        let foreign = ProductCatalog(bundleId: foreignBundleId, groupBase: 22_000_000 + Int(seed % 900_000) * 10)
        self.catalog = catalog
        self.foreignCatalog = foreign
        var generator = PopulationGenerator(
            seed: seed,
            anchor: anchor,
            bundleId: bundleId,
            foreignBundleId: foreignBundleId,
            catalog: catalog,
            foreignCatalog: foreign
        )
        self.families = generator.generate(subscriptions: max(0, subscriptions))
        self.subscriptionCount = families.reduce(0) { $0 + $1.subscriptions.count }
    }

    /// The scenario deck order for cycle `cycle`: every scenario `weight` times, shuffled by the seed;
    /// the first cycle starts with one of each so that small populations still cover every scenario.
    static func deck(seed: UInt64, cycle: Int) -> [Scenario] {
        var rng = SeededRandom(seed, 0xDEC4, UInt64(cycle))
        func shuffle(_ a: inout [Scenario]) {
            guard a.count > 1 else { return }
            for i in stride(from: a.count - 1, to: 0, by: -1) {
                let j = Int(rng.next() % UInt64(i + 1))
                a.swapAt(i, j)
            }
        }
        if cycle == 0 {
            var head = Scenario.allCases
            shuffle(&head)
            var rest: [Scenario] = []
            for s in Scenario.allCases { rest += Array(repeating: s, count: s.weight - 1) }
            shuffle(&rest)
            return head + rest
        }
        var all: [Scenario] = []
        for s in Scenario.allCases { all += Array(repeating: s, count: s.weight) }
        shuffle(&all)
        return all
    }
}
