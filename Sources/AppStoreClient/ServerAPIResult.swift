import AppStoreSignedData

/// The answer of one typed App Store Server API call: the exchange (HTTP status, Apple's `errorCode`,
/// `Retry-After`, a transport failure) and, for a 200, its body decoded. The signed data inside is not yet
/// verified: the caller verifies every JWS before believing anything.
public struct ServerAPIResult<Body: Sendable>: Sendable {
    public let attempt: ServerAPIAttemptResult
    /// The decoded body when Apple answered 200 (a body that is not Apple's shape is `.failure`); nil otherwise.
    public let body: Result<Body, SignedDataError>?

    public init(attempt: ServerAPIAttemptResult, decode: (_ bytes: [UInt8]) throws(SignedDataError) -> Body) {
        self.attempt = attempt
        if attempt.classification == .success {
            do throws(SignedDataError) {
                body = .success(try decode(attempt.body))
            } catch {
                body = .failure(error)
            }
        } else {
            body = nil
        }
    }
}
