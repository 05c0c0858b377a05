/// The Financial reports' `Sale or Return` column: `S` a sale, `R` a return (a refund, with a negative quantity and
/// extended partner share).
public enum AppleSaleOrReturn: String, Sendable, Equatable {
    case sale = "S"
    case refund = "R"
}
