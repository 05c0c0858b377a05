import Foundation
import ReceiptDomain
import TestSupport

/// A verifyReceipt endpoint on loopback whose answers a test scripts per receipt (the tests' one
/// `LoopbackHTTPServer` underneath). For pipeline tests that need answers the simulator does not give
/// (a 21004 for some receipts only, a 21010 for a chosen row).
final class ScriptedAppleServer: Sendable {
    /// The JSON body to answer for one request's `receipt-data`.
    typealias Script = @Sendable (_ receipt: String) -> String

    private let server: LoopbackHTTPServer

    var port: Int { server.port }
    var productionURL: String { "http://127.0.0.1:\(port)/verifyReceipt" }
    var sandboxURL: String { "http://127.0.0.1:\(port)/sandbox/verifyReceipt" }

    /// The receipts asked about so far, in arrival order.
    var requests: [String] { server.requests.map(Self.receipt(of:)) }

    init(script: @escaping Script) throws {
        server = try LoopbackHTTPServer { request in
            .json(script(Self.receipt(of: request)))
        }
    }

    /// The whole answer (status, headers, body, delivery) for one request's `receipt-data`, the endpoint it was
    /// sent to, and the request's body as sent (to pass on).
    typealias ExchangeScript =
        @Sendable (_ receipt: String, _ environment: AppleEnvironment, _ body: [UInt8]) ->
        LoopbackHTTPServer.Response

    init(exchanges script: @escaping ExchangeScript) throws {
        server = try LoopbackHTTPServer { request in
            let environment: AppleEnvironment = request.path.hasPrefix("/sandbox/") ? .sandbox : .production
            return script(Self.receipt(of: request), environment, request.body)
        }
    }

    /// Stops accepting; connections already open end when their client closes them.
    func stop() { server.stop() }

    private static func receipt(of request: LoopbackHTTPServer.Request) -> String {
        let object = (try? JSONSerialization.jsonObject(with: Data(request.body))) as? [String: Any]
        return object?["receipt-data"] as? String ?? ""
    }

    // MARK: Answers

    /// A status-only answer (`{"status": 21004}`).
    static func status(_ status: Int) -> String { "{\"status\": \(status)}" }

    /// A status-0 answer for one subscription: a single transaction `otid` of `productId` bought 30 days
    /// before `expires`, auto-renew on.
    static func valid(
        otid: String,
        productId: String = "com.example.renewals.pro.monthly",
        expires: Date,
        bundleId: String = "com.example.renewals"
    ) -> String {
        let expiresMs = Int64(expires.timeIntervalSince1970 * 1000)
        let purchaseMs = expiresMs - 30 * 86_400_000
        return """
            {"status": 0, "environment": "Production",
             "receipt": {"bundle_id": "\(bundleId)", "in_app": []},
             "latest_receipt_info": [{"transaction_id": "\(otid)", "original_transaction_id": "\(otid)",
                "product_id": "\(productId)", "quantity": "1", "purchase_date_ms": "\(purchaseMs)",
                "original_purchase_date_ms": "\(purchaseMs)", "expires_date_ms": "\(expiresMs)",
                "is_trial_period": "false", "is_in_intro_offer_period": "false",
                "subscription_group_identifier": "g1"}],
             "pending_renewal_info": [{"original_transaction_id": "\(otid)", "auto_renew_product_id": "\(productId)",
                "auto_renew_status": "1"}]}
            """
    }
}
