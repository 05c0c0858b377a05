import CCurl
import Foundation
import Testing

@testable import CurlHTTP

/// Pure logic: error classification, URL redaction, header parsing, duration conversion.
@Suite struct CurlHTTPUnitTests {
    @Test func classifierMapsCurlCodes() {
        #expect(
            CurlErrorClassifier.classify(CURLE_OPERATION_TIMEDOUT, exceededCap: false, requestSent: true) == .timeout
        )
        #expect(
            CurlErrorClassifier.classify(CURLE_OPERATION_TIMEDOUT, exceededCap: false, requestSent: false)
                == .connectTimeout
        )
        #expect(
            CurlErrorClassifier.classify(CURLE_COULDNT_CONNECT, exceededCap: false, requestSent: false)
                == .connectionFailed
        )
        #expect(
            CurlErrorClassifier.classify(CURLE_COULDNT_RESOLVE_HOST, exceededCap: false, requestSent: false)
                == .connectionFailed
        )
        #expect(
            CurlErrorClassifier.classify(CURLE_RECV_ERROR, exceededCap: false, requestSent: true) == .connectionReset
        )
        #expect(
            CurlErrorClassifier.classify(CURLE_PARTIAL_FILE, exceededCap: false, requestSent: true) == .connectionReset
        )
        #expect(
            CurlErrorClassifier.classify(CURLE_PEER_FAILED_VERIFICATION, exceededCap: false, requestSent: true) == .tls
        )
        #expect(CurlErrorClassifier.classify(CURLE_SSL_CONNECT_ERROR, exceededCap: false, requestSent: true) == .tls)
        #expect(
            CurlErrorClassifier.classify(CURLE_FILESIZE_EXCEEDED, exceededCap: false, requestSent: true)
                == .responseTooLarge
        )
        #expect(
            CurlErrorClassifier.classify(CURLE_WRITE_ERROR, exceededCap: true, requestSent: true) == .responseTooLarge
        )
        #expect(CurlErrorClassifier.classify(CURLE_WRITE_ERROR, exceededCap: false, requestSent: true) == .other)
        #expect(
            CurlErrorClassifier.classify(CURLE_URL_MALFORMAT, exceededCap: false, requestSent: false) == .invalidURL
        )
    }

    /// OpenSSL's reasons as libcurl 7.88 puts them in its error buffer.
    @Test func tlsFailuresAreToldApartByCurlsReason() {
        let cases: [(CURLcode, String, TLSFailure)] = [
            (CURLE_PEER_FAILED_VERIFICATION, "SSL certificate problem: self-signed certificate", .untrustedCertificate),
            (
                CURLE_PEER_FAILED_VERIFICATION, "SSL certificate problem: unable to get local issuer certificate",
                .untrustedCertificate
            ),
            (
                CURLE_PEER_FAILED_VERIFICATION,
                "SSL: no alternative certificate subject name matches target host name 'localhost'",
                .hostnameMismatch
            ),
            (
                CURLE_PEER_FAILED_VERIFICATION, "SSL certificate problem: certificate has expired",
                .certificateNotValidNow
            ),
            (CURLE_PEER_FAILED_VERIFICATION, "SSL certificate problem: certificate revoked", .certificateRejected),
            (
                CURLE_SSL_CONNECT_ERROR, "OpenSSL/3.0.19: error:0A00042E:SSL routines::tlsv1 alert protocol version",
                .protocolVersion
            ),
            (CURLE_SSL_CONNECT_ERROR, "error:0A000102:SSL routines::unsupported protocol", .protocolVersion),
            (CURLE_SSL_CONNECT_ERROR, "OpenSSL SSL_connect: Connection reset by peer", .handshake),
            (CURLE_SSL_CONNECT_ERROR, "error:0A00010B:SSL routines::wrong version number", .handshake),
            (CURLE_SSL_CACERT_BADFILE, "error setting certificate file: /nonexistent/ca.pem", .caFile),
        ]
        for (code, detail, expected) in cases {
            #expect(TLSFailure.classify(code, detail: detail) == expected, "\(detail)")
        }
        #expect(TLSFailure.classify(CURLE_COULDNT_CONNECT, detail: "refused") == nil)
        #expect(!TLSFailure.handshake.isRefusal)
        #expect(TLSFailure.protocolVersion.isRefusal && TLSFailure.untrustedCertificate.isRefusal)
    }

    @Test func redactedURLDropsQueryFragmentAndCredentials() throws {
        let url = try #require(
            RedactedURL(parsing: "https://user:pw@buy.itunes.apple.com:8443/verifyReceipt?secret=abc#frag")
        )
        #expect(url.description == "https://buy.itunes.apple.com:8443/verifyReceipt")
        #expect(url.query == "secret=abc")
        #expect(url.isHTTP)
        let plain = try #require(RedactedURL(parsing: "http://127.0.0.1/"))
        #expect(plain.description == "http://127.0.0.1/")
        #expect(RedactedURL(parsing: "::not a url::") == nil)
        #expect(!RedactedURL.describeUnparseable("x?secret").contains("secret"))
    }

    @Test func scrubRemovesURLAndQueryFromMessages() {
        let message = "failed for http://h/p?k=SECRET and k=SECRET"
        let scrubbed = RedactedURL.scrub(message, url: "http://h/p?k=SECRET", query: "k=SECRET")
        #expect(!scrubbed.contains("SECRET"))
        #expect(scrubbed.contains("<url>"))
    }

    @Test func headerParsingKeepsOnlyTheFinalResponse() {
        let transfer = CurlTransfer(id: 1, request: HTTPRequest(url: "http://h/"), maxResponseBytes: 10) { _ in }
        let lines = [
            "HTTP/1.1 100 Continue\r\n", "X-Interim: yes\r\n", "\r\n",
            "HTTP/1.1 200 OK\r\n", "Retry-After:  30 \r\n", "X-Folded: one\r\n", "\t two\r\n", "X-Multi: a\r\n",
            "x-multi: b\r\n", "garbage-without-colon\r\n", "\r\n",
        ]
        for line in lines {
            Array(line.utf8).withUnsafeBytes { transfer.receiveHeaderLine($0) }
        }
        #expect(transfer.headers["x-interim"] == nil)
        #expect(transfer.headers["retry-after"] == "30")
        #expect(transfer.headers["x-folded"] == "one two")
        #expect(transfer.headers.values(for: "X-MULTI") == ["a", "b"])
        #expect(transfer.headers.count == 4)
    }

    @Test func bodyCapIsEnforcedByTheWriteCallback() {
        let transfer = CurlTransfer(id: 1, request: HTTPRequest(url: "http://h/"), maxResponseBytes: 10) { _ in }
        let accepted = Array(repeating: UInt8(1), count: 6).withUnsafeBytes { transfer.receiveBody($0) }
        let refused = Array(repeating: UInt8(1), count: 5).withUnsafeBytes { transfer.receiveBody($0) }
        #expect(accepted)
        #expect(!refused)
        #expect(transfer.exceededCap)
        #expect(transfer.body.count == 6)
    }

    @Test func durationsBecomePositiveMilliseconds() {
        #expect(Duration.seconds(2).curlMilliseconds == 2000)
        #expect(Duration.milliseconds(1500).curlMilliseconds == 1500)
        #expect(Duration.zero.curlMilliseconds == 1)
        #expect(Duration.seconds(-5).curlMilliseconds == 1)
        #expect(Duration.microseconds(10).curlMilliseconds == 1)
        #expect(Duration.seconds(Int64.max / 2).curlMilliseconds == Int(Int32.max))
    }

    @Test func headerLinesRejectInjectionAndKeepEmptyValues() {
        #expect(
            CurlEasyConfigurator.headerLine(name: "Content-Type", value: "application/json")
                == "Content-Type: application/json"
        )
        #expect(CurlEasyConfigurator.headerLine(name: "X-Empty", value: "") == "X-Empty;")
        #expect(CurlEasyConfigurator.headerLine(name: "X-Bad", value: "a\r\nHost: x") == nil)
        #expect(CurlEasyConfigurator.headerLine(name: "Bad Name", value: "v") == nil)
        #expect(CurlEasyConfigurator.headerLine(name: "", value: "v") == nil)
    }

    @Test func errorDescriptionNamesTargetAndCode() {
        let error = HTTPClientError(
            code: .timeout,
            curlCode: 28,
            message: "Operation timed out",
            method: "POST",
            target: "https://sandbox.itunes.apple.com/verifyReceipt"
        )
        #expect(
            error.description
                == "HTTP POST https://sandbox.itunes.apple.com/verifyReceipt failed (timeout): Operation timed out [curl error 28]"
        )
    }
}
