/// Why `explain` could not explain a response: names the source (file) and the problem.
///
/// Never contains the receipt; ids and product ids are not secret and are listed when useful.
public struct ExplainError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable, Equatable {
        /// The body is not a verifyReceipt response (see `parseError`).
        case unreadable = "unreadable"
        /// No original_transaction_id given and the receipt holds several subscriptions.
        case ambiguousSubscription = "ambiguous_subscription"
        /// No original_transaction_id given and the receipt holds no auto-renewable subscription.
        case noSubscription = "no_subscription"
    }

    public let code: Code
    /// The file or source name the response came from.
    public let source: String
    public let problem: String
    public let parseError: ReceiptParseError?
    /// For `ambiguousSubscription`: (original_transaction_id, product_id) of each candidate.
    public let candidates: [(originalTransactionId: String, productId: String)]

    public init(
        code: Code,
        source: String,
        problem: String,
        parseError: ReceiptParseError? = nil,
        candidates: [(originalTransactionId: String, productId: String)] = []
    ) {
        self.code = code
        self.source = source
        self.problem = problem
        self.parseError = parseError
        self.candidates = candidates
    }

    public var description: String { "\(source): \(problem)" }

    public static func == (lhs: ExplainError, rhs: ExplainError) -> Bool {
        lhs.code == rhs.code && lhs.source == rhs.source && lhs.problem == rhs.problem
            && lhs.parseError == rhs.parseError
            && lhs.candidates.map(\.originalTransactionId) == rhs.candidates.map(\.originalTransactionId)
            && lhs.candidates.map(\.productId) == rhs.candidates.map(\.productId)
    }
}
