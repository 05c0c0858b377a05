/// An error answer of the App Store Connect API (docs/simulator.md, "App Store Connect reports"), in Apple's error
/// JSON: `{"errors":[{"status","code","title","detail"}]}`, with `source.parameter` naming a bad parameter.
struct ConnectAPIError: Error, Sendable, Equatable {
    var status: Int
    var code: String
    var title: String
    var detail: String
    var parameter: String?

    static let notAuthorized = ConnectAPIError(
        status: 401,
        code: "NOT_AUTHORIZED",
        title: "Authentication credentials are missing or invalid.",
        detail: "Provide a properly configured and signed bearer token, and make sure that it has not expired."
    )

    static let rateLimitExceeded = ConnectAPIError(
        status: 429,
        code: "RATE_LIMIT_EXCEEDED",
        title: "The request rate limit has been reached.",
        detail:
            "We've received too many requests for this API. Please wait and try again or slow down your request rate."
    )

    static let noSales = notFound("There were no sales for the date specified.")

    static func notFound(_ detail: String) -> ConnectAPIError {
        ConnectAPIError(status: 404, code: "NOT_FOUND", title: "The specified resource does not exist", detail: detail)
    }

    static func invalid(_ parameter: String, _ detail: String) -> ConnectAPIError {
        ConnectAPIError(
            status: 400,
            code: "PARAMETER_ERROR.INVALID",
            title: "A parameter has an invalid value",
            detail: detail,
            parameter: parameter
        )
    }

    static let gone = ConnectAPIError(
        status: 410,
        code: "GONE",
        title: "The requested resource is no longer available",
        detail: "The report you requested is no longer available: daily reports are kept for one year."
    )

    static let notAcceptable = ConnectAPIError(
        status: 406,
        code: "NOT_ACCEPTABLE",
        title: "The specified resource does not support the requested content type",
        detail: "The provided Accept header is not supported for this request. Allowed: application/a-gzip"
    )

    /// The JSON body.
    var body: [UInt8] {
        var w = JSONWriter(capacity: 400)
        w.beginObject()
        w.key("errors")
        w.beginArray()
        w.beginObject()
        w.field("status", String(status))
        w.field("code", code)
        w.field("title", title)
        w.field("detail", detail)
        if let parameter {
            w.key("source")
            w.beginObject()
            w.field("parameter", parameter)
            w.endObject()
        }
        w.endObject()
        w.endArray()
        w.endObject()
        return w.bytes
    }
}
