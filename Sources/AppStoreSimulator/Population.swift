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
    /// Consumable and non-consumable purchases (ONE_TIME_CHARGE), never subscriptions.
    public let oneTimePurchases: [OneTimePurchase]
    /// Extend Subscription Renewal Dates for All Active Subscribers requests (RENEWAL_EXTENSION).
    public let massExtensions: [MassExtension]
    /// RESCIND_CONSENT and the undocumented notification type.
    public let notices: [PopulationNotice]
    /// What the population is for: the test scenarios, or a month like a real app's (`PopulationMix`).
    public let mix: PopulationMix
    /// Customers whose purchases never reached the app's database (docs/simulator.md, "Lost orders"): in Apple's
    /// reports (`SalesTruth`), nowhere else the app could see (no stored row, no receipt, no notification).
    public let lostOrders: [ReceiptFamily]

    /// `lostOrders`: how many lost customers to add beside the `subscriptions` (each one subscription); `mix`: which
    /// kind of world.
    public init(
        seed: UInt64,
        subscriptions: Int,
        anchor: Int64,
        bundleId: String = "com.example.renewals",
        lostOrders: Int = 0,
        mix: PopulationMix = .scenarios
    ) {
        self.seed = seed
        self.anchor = anchor
        self.bundleId = bundleId
        self.mix = mix
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
            foreignCatalog: foreign,
            mix: mix
        )
        var families = generator.generate(subscriptions: max(0, subscriptions))
        self.lostOrders = generator.lostOrders(count: lostOrders, firstIndex: families.count)
        let idBase = 1_000_000_000_000_000 + (SeededRandom.mix(seed) % 90) * 10_000_000_000_000
        let decorator = PopulationDecorator(
            seed: seed,
            anchor: anchor,
            bundleId: bundleId,
            catalog: catalog,
            oneTimeBase: idBase + 9_000_000_000_000
        )
        let added = decorator.decorate(&families)
        self.families = families
        self.oneTimePurchases = added.oneTime
        self.massExtensions = added.mass
        self.notices = added.notices
        self.subscriptionCount = families.reduce(0) { $0 + $1.subscriptions.count }
    }

    /// The scenario deck order for cycle `cycle`: every scenario `weight` times, shuffled by the seed;
    /// the first cycle starts with one of each so that small populations still cover every scenario.
    ///
    /// The deck is drawn as it was before the 2026 scenarios (`Scenario.takesSilentRenewalSlots`), whose slots
    /// are then taken from `silent_renewal`: the first ones after the head in the first cycle, the first ones in
    /// the others. Every other family keeps its scenario.
    static func deck(seed: UInt64, cycle: Int) -> [Scenario] {
        let added = Scenario.takesSilentRenewalSlots
        let legacy = Scenario.allCases.filter { !added.contains($0) }
        func weight(_ s: Scenario) -> Int { s == .silentRenewal ? s.weight + added.count : s.weight }
        var rng = SeededRandom(seed, 0xDEC4, UInt64(cycle))
        func shuffle(_ a: inout [Scenario]) {
            guard a.count > 1 else { return }
            for i in stride(from: a.count - 1, to: 0, by: -1) {
                let j = Int(rng.next() % UInt64(i + 1))
                a.swapAt(i, j)
            }
        }
        var deck: [Scenario] = []
        var from = 0
        if cycle == 0 {
            var head = legacy
            shuffle(&head)
            var rest: [Scenario] = []
            for s in legacy { rest += Array(repeating: s, count: weight(s) - 1) }
            shuffle(&rest)
            deck = head + rest
            from = head.count
        } else {
            for s in legacy { deck += Array(repeating: s, count: weight(s)) }
            shuffle(&deck)
        }
        var slots = added[...]
        for i in deck.indices where i >= from && deck[i] == .silentRenewal {
            guard let next = slots.popFirst() else { break }
            deck[i] = next
        }
        return deck
    }
}
