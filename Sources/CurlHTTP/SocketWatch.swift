import CCurl
import Dispatch

/// The Dispatch sources watching one socket for curl, plus bookkeeping for closing it safely.
///
/// libdispatch must not see a file descriptor closed (and possibly reused by a new socket) while
/// a source on it is still registered, so sockets curl wants closed are closed only once every
/// source on them has run its cancel handler. `@unchecked Sendable`: only ever touched on the
/// driver queue (its Dispatch handlers target that queue), never concurrently.
final class SocketWatch: @unchecked Sendable {
    let socket: curl_socket_t
    var read: (any DispatchSourceRead)?
    var write: (any DispatchSourceWrite)?
    /// Sources created and not yet through their cancel handler.
    var liveSources = 0
    /// curl asked to close the socket (CURLOPT_CLOSESOCKETFUNCTION) while sources were live.
    var closeRequested = false

    init(socket: curl_socket_t) {
        self.socket = socket
    }
}
