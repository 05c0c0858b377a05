import Foundation
import NIOCore
import NIOHTTP1

/// The App Store Connect API side of the handler (docs/simulator.md, "App Store Connect reports"):
/// `GET /v1/salesReports` and `GET /v1/financeReports`. Checks in Apple's order as far as it shows: the team key's
/// token (401), the hourly budget (429), the `Accept` header (406), the filters (400), then the report (404, 410, or
/// 200 with the gzip file). Every answer carries `X-Rate-Limit`.
extension SimulatorHTTPHandler {
    static let reportPaths: Set<String> = ["/v1/salesReports", "/v1/financeReports"]

    func reportRequest(context: ChannelHandlerContext, head: HTTPRequestHead, path: String, keepAlive: Bool) {
        let limit = reportsHourlyLimit
        let answer: Result<[UInt8], ConnectAPIError>
        let remaining: Int
        if case .failure(let box) = connectAuthenticator.check(
            authorization: head.headers.first(name: "Authorization"),
            now: SimClock.real.now()
        ) {
            stats.recordAuthFailure(box.failure.rawValue)
            remaining = stats.admitReport(limit: limit, consume: false).remaining
            answer = .failure(.notAuthorized)
        } else {
            let admission = stats.admitReport(limit: limit)
            remaining = admission.remaining
            answer = admission.admitted ? reportAnswer(head: head, path: path) : .failure(.rateLimitExceeded)
        }
        let rateHeader = ("X-Rate-Limit", "user-hour-lim:\(limit);user-hour-rem:\(remaining);")
        switch answer {
        case .success(let gzip):
            stats.record(path: path, httpStatus: 200, appleStatus: nil, fault: nil)
            respond(
                context: context,
                status: .ok,
                body: Self.bytes(gzip),
                contentType: "application/a-gzip",
                keepAlive: keepAlive,
                extra: [rateHeader]
            )
        case .failure(let error):
            stats.record(path: path, httpStatus: error.status, appleStatus: nil, fault: nil)
            respond(
                context: context,
                status: HTTPResponseStatus(statusCode: error.status),
                body: Self.bytes(error.body),
                keepAlive: keepAlive,
                extra: [rateHeader]
            )
        }
    }

    /// The gzip report, or the error, of an authenticated request within the budget.
    private func reportAnswer(head: HTTPRequestHead, path: String) -> Result<[UInt8], ConnectAPIError> {
        guard head.method == .GET else {
            return .failure(
                ConnectAPIError(
                    status: 405,
                    code: "METHOD_NOT_ALLOWED",
                    title: "The request method is not allowed",
                    detail: "Only GET is allowed on \(path)."
                )
            )
        }
        guard Self.acceptsGzip(head.headers[canonicalForm: "Accept"].map(String.init)) else {
            return .failure(.notAcceptable)
        }
        let query = head.uri.firstIndex(of: "?").map { head.uri[head.uri.index(after: $0)...] } ?? ""
        let vendor = reports.identity.vendorNumber
        do throws(ConnectAPIError) {
            let request =
                path == "/v1/salesReports"
                ? try ReportRequest.sales(query, vendorNumber: vendor)
                : try ReportRequest.finance(query, vendorNumber: vendor)
            return .success(Gzip.compress(Array(try reports.report(request).utf8)))
        } catch {
            return .failure(error)
        }
    }

    /// Apple sends the files as `application/a-gzip`; a request that accepts only other types is refused. No
    /// `Accept` header, or `*/*`, is taken as accepting it.
    static func acceptsGzip(_ values: [String]) -> Bool {
        let types = values.map { value in
            (value.split(separator: ";").first ?? "").trimmingCharacters(in: .whitespaces).lowercased()
        }
        return types.isEmpty || types.contains { $0 == "application/a-gzip" || $0 == "*/*" || $0 == "application/*" }
    }
}
