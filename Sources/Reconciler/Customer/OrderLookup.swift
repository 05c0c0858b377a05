import AppStoreClient
import AppStoreSignedData
import Dispatch
import ReceiptDomain

/// Look Up Order ID for support (docs/customer.md, "By order id"): asks Apple once, in production (Apple has no
/// order ids in the sandbox), and believes a signed transaction of the answer only once it verifies exactly as the
/// run's statuses and history do: the chain to the configured roots, Apple's OIDs, ES256, the bundle id, the
/// environment and the App Apple ID, then the value bounds. One forged transaction refuses the whole answer.
public struct OrderLookup: Sendable {
    let client: ServerAPIClient
    let verifier: SignedDataVerifier

    public init(client: ServerAPIClient, settings: ServerAPISettings) {
        self.client = client
        verifier = SignedDataVerifier(
            roots: settings.roots,
            options: SignedDataVerifier.Options(
                bundleId: settings.api.bundleId,
                environment: .production,
                appAppleId: settings.appAppleId
            )
        )
    }

    /// The order's transactions, verified.
    /// - Throws: `CustomerLookupError` (an unknown order, a refused signature, 401, Apple unavailable).
    public func transactions(orderId: String) throws(CustomerLookupError) -> [ReceiptTransaction] {
        let result = send(orderId)
        let attempt = result.attempt
        switch (attempt.httpStatus, result.body) {
        case (200, .success(let response)):
            return try verified(response, orderId: orderId)
        case (200, .failure(let error)):
            throw CustomerLookupError(.appleUnavailable, "Look Up Order ID: not Apple's answer (\(error.detail))")
        case (400, _):
            throw CustomerLookupError(.unknownOrder, "Apple knows no order \(orderId) (\(Self.describe(attempt)))")
        case (401, _):
            throw CustomerLookupError(
                .unauthorized,
                "Look Up Order ID: Apple answered 401: the key, key id, issuer id or bundle id is wrong"
            )
        default:
            throw CustomerLookupError(.appleUnavailable, "Look Up Order ID: \(Self.describe(attempt)); try again later")
        }
    }

    /// Every signed transaction verified and within bounds; status 1 (or 0 without transactions) is no such order.
    func verified(_ response: OrderLookupResponse, orderId: String) throws(CustomerLookupError) -> [ReceiptTransaction]
    {
        guard response.status == OrderLookupResponse.valid, !response.signedTransactions.isEmpty else {
            throw CustomerLookupError(.unknownOrder, "Apple knows no order \(orderId) for this app (status 1)")
        }
        var transactions: [ReceiptTransaction] = []
        for signed in response.signedTransactions {
            do {
                let payload = try verifier.verifyTransaction(signed)
                guard let transaction = SignedDataMapping.transaction(payload, jws: signed) else {
                    throw CustomerLookupError(.signedDataRefused, "order \(orderId): a signed transaction without ids")
                }
                if let problem = ValueBounds.problem(in: transaction) {
                    throw CustomerLookupError(.signedDataRefused, "order \(orderId): implausible_value: \(problem)")
                }
                transactions.append(transaction)
            } catch let error as CustomerLookupError {
                throw error
            } catch {
                throw CustomerLookupError(.signedDataRefused, "order \(orderId): signed_data_refused: \(error)")
            }
        }
        return transactions
    }

    /// One request, waited for (the answer arrives on the HTTP client's queue).
    private func send(_ orderId: String) -> ServerAPIResult<OrderLookupResponse> {
        let answered = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var answer: ServerAPIResult<OrderLookupResponse>?
        client.lookUpOrder(orderId: orderId) { result in
            answer = result
            answered.signal()
        }
        answered.wait()
        return answer!
    }

    static func describe(_ attempt: ServerAPIAttemptResult) -> String { ServerAPIVerification.describe(attempt) }
}
