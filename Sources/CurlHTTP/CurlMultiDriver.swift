import CCurl
import Dispatch
import Foundation

/// Owns one libcurl multi handle and drives it from Dispatch: a read/write source per socket
/// (CURLMOPT_SOCKETFUNCTION), one timer (CURLMOPT_TIMERFUNCTION), `curl_multi_socket_action`
/// and `curl_multi_info_read`. Hundreds of transfers share one serial queue and one connection cache.
///
/// `@unchecked Sendable`: every mutable property and every libcurl call is confined to `queue`
/// (a serial queue); the public entry points only enqueue work on it.
final class CurlMultiDriver: @unchecked Sendable {
    let queue: DispatchQueue
    private let configuration: CurlHTTPClient.Configuration
    private var multi: UnsafeMutableRawPointer?
    private var timer: (any DispatchSourceTimer)?
    private var sockets: [curl_socket_t: SocketWatch] = [:]
    private var transfers: [UInt64: Unmanaged<CurlTransfer>] = [:]
    private var isShutDown = false
    private let completionQueue = DispatchQueue.global(qos: .userInitiated)

    init(configuration: CurlHTTPClient.Configuration) {
        self.configuration = configuration
        self.queue = DispatchQueue(label: "CurlHTTP.multi")
        queue.sync { setUp() }
    }

    // No deinit clean-up: `CurlHTTPClient.deinit` calls `shutdown()`, which releases everything on
    // the queue. Cleaning up here would let libcurl call back into a half-deinitialised object.

    // MARK: public entry points (any thread)

    func start(_ transfer: CurlTransfer) {
        queue.async { self.add(transfer) }
    }

    func cancel(id: UInt64) {
        queue.async {
            guard let unmanaged = self.transfers.removeValue(forKey: id) else { return }
            let transfer = unmanaged.takeUnretainedValue()
            self.detach(transfer)
            unmanaged.release()
            self.deliver(transfer, .failure(transfer.error(.cancelled, message: "the request was cancelled")))
        }
    }

    /// Cancels every transfer in flight (completing each with `.cancelled`), closes all connections
    /// and stops the Dispatch sources. Blocks until done; later requests fail with `.cancelled`.
    func shutdown() {
        dispatchPrecondition(condition: .notOnQueue(queue))
        queue.sync { tearDown() }
    }

    // MARK: set-up and tear-down (queue)

    private func setUp() {
        guard CurlGlobal.isInitialized, let multi = curl_multi_init() else {
            return  // `add` reports the failure per request
        }
        self.multi = multi
        let opaqueSelf = Unmanaged.passUnretained(self).toOpaque()

        _ = ccurl_multi_setopt_pointer(multi, CURLMOPT_SOCKETDATA, opaqueSelf)
        _ = ccurl_multi_setopt_socket_function(multi) { _, socket, what, userp, _ in
            guard let userp else { return -1 }
            let driver = Unmanaged<CurlMultiDriver>.fromOpaque(userp).takeUnretainedValue()
            driver.watch(socket: socket, what: what)
            return 0
        }
        _ = ccurl_multi_setopt_pointer(multi, CURLMOPT_TIMERDATA, opaqueSelf)
        _ = ccurl_multi_setopt_timer_function(multi) { _, timeoutMilliseconds, userp in
            guard let userp else { return -1 }
            let driver = Unmanaged<CurlMultiDriver>.fromOpaque(userp).takeUnretainedValue()
            driver.scheduleTimer(milliseconds: timeoutMilliseconds)
            return 0
        }
        _ = ccurl_multi_setopt_long(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, max(0, configuration.maxConnections))
        _ = ccurl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, max(0, configuration.maxHostConnections))
        // Size of the idle-connection cache: keep every connection we may open reusable.
        _ = ccurl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, max(1, configuration.maxConnections))
        _ = ccurl_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))

        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.setEventHandler { [unowned self] in
            self.socketAction(socket: CURL_SOCKET_TIMEOUT, events: 0)
        }
        timer.schedule(deadline: .distantFuture)
        timer.resume()
        self.timer = timer
    }

    private func tearDown() {
        guard !isShutDown else { return }
        isShutDown = true
        let inFlight = transfers
        transfers.removeAll()
        for unmanaged in inFlight.values {
            let transfer = unmanaged.takeUnretainedValue()
            detach(transfer)
            unmanaged.release()
            deliver(transfer, .failure(transfer.error(.cancelled, message: "the HTTP client was shut down")))
        }
        if let multi {
            // Closes cached connections; their sockets come back through `closeSocket`.
            curl_multi_cleanup(multi)
            self.multi = nil
        }
        timer?.cancel()
        timer = nil
        for watch in sockets.values {
            stopSources(of: watch)
            watch.closeRequested = true
            closeIfDrained(watch)
        }
    }

    // MARK: transfers (queue)

    private func add(_ transfer: CurlTransfer) {
        if isShutDown {
            deliver(transfer, .failure(transfer.error(.cancelled, message: "the HTTP client was shut down")))
            return
        }
        guard let multi else {
            deliver(transfer, .failure(transfer.error(.other, message: "libcurl could not be initialised")))
            return
        }
        let easy: UnsafeMutableRawPointer
        switch CurlEasyConfigurator.makeHandle(for: transfer, configuration: configuration) {
        case .success(let handle):
            easy = handle
        case .failure(let error):
            deliver(transfer, .failure(error))
            return
        }
        transfer.easy = easy

        // The transfer stays alive while libcurl holds pointers to it; released once in finish/cancel.
        let unmanaged = Unmanaged.passRetained(transfer)
        let opaqueTransfer = unmanaged.toOpaque()
        _ = ccurl_easy_setopt_pointer(easy, CURLOPT_PRIVATE, opaqueTransfer)
        _ = ccurl_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, opaqueTransfer)
        _ = ccurl_easy_setopt_pointer(easy, CURLOPT_HEADERDATA, opaqueTransfer)
        // Sockets can outlive the easy handle (connection cache), so closing goes through the driver,
        // which lives as long as the multi handle.
        _ = ccurl_easy_setopt_pointer(easy, CURLOPT_CLOSESOCKETDATA, Unmanaged.passUnretained(self).toOpaque())
        _ = ccurl_easy_setopt_closesocket_function(easy) { clientp, socket in
            guard let clientp else { return ccurl_close_socket(socket) }
            let driver = Unmanaged<CurlMultiDriver>.fromOpaque(clientp).takeUnretainedValue()
            driver.closeSocket(socket)
            return 0
        }

        let added = curl_multi_add_handle(multi, easy)
        guard added == CURLM_OK else {
            unmanaged.release()
            transfer.releaseCResources()
            let text = String(cString: curl_multi_strerror(added))
            deliver(transfer, .failure(transfer.error(.other, message: "curl_multi_add_handle failed: \(text)")))
            return
        }
        transfers[transfer.id] = unmanaged
        // curl_multi_add_handle has set a 0 ms timer through the timer callback; that kicks the transfer off.
    }

    /// Removes the easy handle from the multi handle and frees its C resources.
    private func detach(_ transfer: CurlTransfer) {
        if let multi, let easy = transfer.easy {
            curl_multi_remove_handle(multi, easy)
        }
        transfer.releaseCResources()
    }

    private func socketAction(socket: curl_socket_t, events: Int32) {
        guard let multi else { return }
        var running: Int32 = 0
        _ = curl_multi_socket_action(multi, socket, events, &running)
        readCompletedTransfers()
    }

    private func readCompletedTransfers() {
        guard let multi else { return }
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            // Copy out of the message before removing the handle (which invalidates it).
            let result = ccurl_msg_result(message)
            finish(easy: easy, result: result)
        }
    }

    private func finish(easy: UnsafeMutableRawPointer, result: CURLcode) {
        var privatePointer: UnsafeMutablePointer<CChar>?
        guard ccurl_easy_getinfo_pointer(easy, CURLINFO_PRIVATE, &privatePointer) == CURLE_OK,
            let privatePointer
        else {
            // Not one of ours; should not happen. Remove it so the multi handle does not spin on it.
            if let multi { curl_multi_remove_handle(multi, easy) }
            return
        }
        let unmanaged = Unmanaged<CurlTransfer>.fromOpaque(UnsafeRawPointer(privatePointer))
        let transfer = unmanaged.takeUnretainedValue()
        guard transfers.removeValue(forKey: transfer.id) != nil else { return }

        let outcome = CurlResponseBuilder.outcome(of: transfer, easy: easy, result: result)
        detach(transfer)
        unmanaged.release()
        deliver(transfer, outcome)
    }

    private func deliver(_ transfer: CurlTransfer, _ result: Result<HTTPResponse, HTTPClientError>) {
        let completion = transfer.completion
        // Callers' code never runs on the driver queue, so it can neither block the event loop
        // nor re-enter libcurl.
        completionQueue.async { completion(result) }
    }

    // MARK: curl callbacks (queue, from inside libcurl)

    private func scheduleTimer(milliseconds: Int) {
        guard let timer else { return }
        if milliseconds < 0 {
            timer.schedule(deadline: .distantFuture)
        } else {
            timer.schedule(deadline: .now() + .milliseconds(milliseconds), leeway: .milliseconds(1))
        }
    }

    private func watch(socket: curl_socket_t, what: Int32) {
        let watch =
            sockets[socket]
            ?? {
                let created = SocketWatch(socket: socket)
                sockets[socket] = created
                return created
            }()
        let wantRead = what == CURL_POLL_IN || what == CURL_POLL_INOUT
        let wantWrite = what == CURL_POLL_OUT || what == CURL_POLL_INOUT

        if wantRead, watch.read == nil {
            let source = DispatchSource.makeReadSource(fileDescriptor: socket, queue: queue)
            source.setEventHandler { [unowned self] in
                self.socketAction(socket: socket, events: CURL_CSELECT_IN)
            }
            source.setCancelHandler { [self] in
                watch.liveSources -= 1
                self.closeIfDrained(watch)
            }
            watch.liveSources += 1
            watch.read = source
            source.resume()
        } else if !wantRead, let source = watch.read {
            watch.read = nil
            source.cancel()
        }

        if wantWrite, watch.write == nil {
            let source = DispatchSource.makeWriteSource(fileDescriptor: socket, queue: queue)
            source.setEventHandler { [unowned self] in
                self.socketAction(socket: socket, events: CURL_CSELECT_OUT)
            }
            source.setCancelHandler { [self] in
                watch.liveSources -= 1
                self.closeIfDrained(watch)
            }
            watch.liveSources += 1
            watch.write = source
            source.resume()
        } else if !wantWrite, let source = watch.write {
            watch.write = nil
            source.cancel()
        }
    }

    /// CURLOPT_CLOSESOCKETFUNCTION: close now if no Dispatch source can still touch the descriptor,
    /// otherwise once the last source's cancel handler has run.
    private func closeSocket(_ socket: curl_socket_t) {
        guard let watch = sockets[socket] else {
            _ = ccurl_close_socket(socket)
            return
        }
        stopSources(of: watch)
        watch.closeRequested = true
        closeIfDrained(watch)
    }

    private func stopSources(of watch: SocketWatch) {
        if let read = watch.read {
            watch.read = nil
            read.cancel()
        }
        if let write = watch.write {
            watch.write = nil
            write.cancel()
        }
    }

    private func closeIfDrained(_ watch: SocketWatch) {
        guard watch.liveSources == 0, watch.read == nil, watch.write == nil else { return }
        if watch.closeRequested {
            watch.closeRequested = false
            _ = ccurl_close_socket(watch.socket)
        }
        if sockets[watch.socket] === watch {
            sockets[watch.socket] = nil
        }
    }
}
