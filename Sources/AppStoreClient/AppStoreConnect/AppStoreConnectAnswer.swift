import Foundation
import ReceiptDomain

/// What one App Store Connect API report request came back with, classified as docs/apple-reports.md
/// ("Downloading") describes Apple's answers: a file, an empty day, a report not out yet, one past Apple's
/// retention, something to retry, or a refusal that retrying cannot mend.
public enum AppStoreConnectAnswer: Sendable, Equatable {
    /// 200: the report file (gzip, as Apple sends it).
    case file([UInt8])
    /// 404 `NOT_FOUND`, "There were no sales for the date specified": a real empty day, nothing to store.
    case noSales
    /// Any other 404 `NOT_FOUND`: the report is not available yet (try again on a later download).
    case notYetAvailable(detail: String)
    /// 410: past Apple's retention; it will never come.
    case gone(detail: String)
    /// 429, 5xx or no HTTP answer (a TLS refusal aside): worth another try, not before `notBefore` when Apple said so.
    case retryable(notBefore: Date?, reason: String)
    /// 400, 401, 403 and the rest, or a refused TLS connection (status 0): the request, the key or the server's
    /// certificate is wrong; `status` and Apple's `code` say how.
    case refused(status: Int, code: String, detail: String)

    /// Classifies an HTTP answer (`status`, Apple's error body, its `Retry-After`), or a transport failure.
    public static func classify(
        status: Int?,
        body: [UInt8],
        retryAfter: Date?,
        transportFailure: TransportFailure?
    ) -> AppStoreConnectAnswer {
        if case .tlsRefused(let reason)? = transportFailure {
            return .refused(status: 0, code: "TLS_REFUSED", detail: reason)
        }
        guard let status else {
            return .retryable(
                notBefore: nil,
                reason: transportFailure.map(String.init(describing:)) ?? "no HTTP answer"
            )
        }
        if status == 200 { return .file(body) }
        let error = firstError(in: body)
        let detail = error?.detail ?? ""
        switch status {
        case 404 where detail.lowercased().contains("no sales"):
            return .noSales
        case 404:
            return .notYetAvailable(detail: detail.isEmpty ? "report not found" : detail)
        case 410:
            return .gone(detail: detail.isEmpty ? "report no longer available" : detail)
        case 429:
            return .retryable(notBefore: retryAfter, reason: "HTTP 429 \(error?.code ?? "RATE_LIMIT_EXCEEDED")")
        case 500...599:
            return .retryable(notBefore: retryAfter, reason: "HTTP \(status)")
        default:
            return .refused(status: status, code: error?.code ?? "HTTP_\(status)", detail: detail)
        }
    }

    /// The first entry of Apple's `{"errors": [{"status", "code", "title", "detail"}]}` (a small body only).
    static func firstError(in body: [UInt8]) -> (code: String, detail: String)? {
        guard body.count < 65_536,
            let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
            let first = (object["errors"] as? [Any])?.first as? [String: Any]
        else { return nil }
        return (first["code"] as? String ?? "", first["detail"] as? String ?? first["title"] as? String ?? "")
    }

    /// `user-hour-rem` of Apple's `X-Rate-Limit: user-hour-lim:3600;user-hour-rem:3599;` header.
    public static func remainingRequests(inRateLimitHeader header: String?) -> Int? {
        guard let header else { return nil }
        for part in header.split(separator: ";") {
            let pair = part.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if pair.count == 2, pair[0] == "user-hour-rem" { return Int(pair[1]) }
        }
        return nil
    }
}
