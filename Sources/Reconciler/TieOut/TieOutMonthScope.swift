import AppleReports

/// The fiscal months the monthly view compares and the keys of it whose proceeds Apple pays in another currency than
/// the customer's (docs/tie-out.md, "The monthly view"): those keys are one `exchange_rate` row each.
struct TieOutMonthScope {
    /// A key of the monthly view without its measure and cause.
    struct Group: Hashable {
        var month: String
        var product: String
        var country: String
        var currency: String
    }

    let months: Set<AppleFiscalMonth>
    /// Apple's currency of each key paid in another currency.
    private(set) var foreign: [Group: String] = [:]

    /// From the Financial reports' partner shares and the Subscriber report's proceeds currencies.
    init(_ input: TieOutInput) {
        months = Set(input.fiscalMonths)
        for share in input.partnerShares
        where months.contains(share.fiscalMonth) && share.shareCurrency != share.currency {
            let group = Group(
                month: share.fiscalMonth.name,
                product: share.productId,
                country: share.country,
                currency: share.currency
            )
            foreign[group] = share.shareCurrency
        }
        for event in input.apple where event.proceedsCurrency != event.currency {
            guard let m = month(event.day) else { continue }
            foreign[group(m, event.productKey, event.country, event.currency)] = event.proceedsCurrency
        }
    }

    /// The compared fiscal month holding `day`, or nil.
    func month(_ day: PacificDay) -> AppleFiscalMonth? {
        let month = AppleFiscalMonth(containing: day)
        return months.contains(month) ? month : nil
    }

    func group(_ month: AppleFiscalMonth, _ product: String, _ country: String, _ currency: String) -> Group {
        Group(month: month.name, product: product, country: country, currency: currency)
    }

    /// Apple's currency when Apple pays the key in another currency, else nil.
    func foreignCurrency(_ group: Group) -> String? { foreign[group] }
}
