internal import CCurl
internal import CShims
import HTTPCore

/// Connect-only transfers (DESIGN §9): libcurl connects, with TLS and the route's
/// policy, and the connection is handed over as an `UpstreamTunnel`.
extension SessionManager {
    /// This worker's session for tunnels, made when first asked for.
    func tunnelSession() -> SessionManager {
        if let tunnels { return tunnels }
        // A multi handle that cannot be made fails each connect in `connectOnly`.
        let made = (try? SessionManager(loop: loop)) ?? self
        tunnels = made
        return made
    }

    func connectOnly(_ request: UpstreamRequest, completion: @escaping (Result<UpstreamTunnel, UpstreamFailure>) -> Void) {
        guard !closed, let easy = Self.newHandle() else {
            return completion(.failure(.unavailable(code: Int(CURLE_FAILED_INIT.rawValue), message: "cannot start an upstream connection")))
        }
        let transfer = Transfer(easy: easy, limit: 0, completion: { _ in })
        transfer.tunnel = completion
        transfer.tag = request.tag
        transfer.url = request.url
        transfer.started = Clock.now()
        do throws(CurlError) {
            try request.tls?.apply(to: easy)
            try Self.configure(transfer, request)
            // HTTP/1.1 is what the handshake speaks: ALPN must not agree on h2.
            try Curl.check(cshim_easy_setopt_long(easy, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_1_1)), "CURLOPT_HTTP_VERSION")
            try Curl.check(cshim_easy_setopt_long(easy, CURLOPT_CONNECT_ONLY, 1), "CURLOPT_CONNECT_ONLY")
            try Curl.check(cshim_easy_setopt_long(easy, CURLOPT_FRESH_CONNECT, 1), "CURLOPT_FRESH_CONNECT")
            // A tunnel is never idle to libcurl's eyes for long enough to be pruned.
            try Curl.check(cshim_easy_setopt_long(easy, CURLOPT_MAXAGE_CONN, Int(Int32.max)), "CURLOPT_MAXAGE_CONN")
            try Curl.check(curl_multi_add_handle(multi, easy), "curl_multi_add_handle")
        } catch {
            transfer.release()
            return completion(.failure(.unavailable(code: error.code, message: error.description)))
        }
        transfers[easy] = transfer
    }

    /// A connect-only transfer finished: connected (the handle stays in the multi, which
    /// keeps its connection) or failed.
    func connected(_ transfer: Transfer, _ code: CURLcode) {
        guard let done = transfer.tunnel else { return }
        transfer.tunnel = nil
        var fd: curl_socket_t = -1
        if code == CURLE_OK, cshim_easy_getinfo_socket(transfer.easy, CURLINFO_ACTIVESOCKET, &fd) == CURLE_OK, fd >= 0 {
            let tunnel = UpstreamTunnel(easy: transfer.easy, fd: fd, owner: self, loop: loop)
            openTunnels[transfer.easy] = tunnel
            // The easy handle is the tunnel's now; the transfer's buffers go, and libcurl
            // keeps no pointer to them.
            _ = cshim_easy_setopt_pointer(transfer.easy, CURLOPT_HTTPHEADER, nil)
            _ = cshim_easy_setopt_pointer(transfer.easy, CURLOPT_ERRORBUFFER, nil)
            transfer.releaseKeepingHandle()
            return done(.success(tunnel))
        }
        let result = Self.outcome(transfer, code == CURLE_OK ? CURLE_COULDNT_CONNECT : code)
        _ = curl_multi_remove_handle(multi, transfer.easy)
        transfer.release()
        switch result {
        case .failure(let failure): done(.failure(failure))
        case .success: done(.failure(.unavailable(code: Int(CURLE_COULDNT_CONNECT.rawValue), message: "the connection was lost")))
        }
    }

    /// Removing a connect-only handle from its multi closes its connection.
    func closeTunnel(_ tunnel: UpstreamTunnel) {
        guard openTunnels.removeValue(forKey: tunnel.easy) != nil else { return }
        _ = curl_multi_remove_handle(multi, tunnel.easy)
        curl_easy_cleanup(tunnel.easy)
    }

    /// Shutdown: every tunnel closes and its user hears of it.
    func abortTunnels() {
        for tunnel in Array(openTunnels.values) { tunnel.abort() }
        tunnels?.abortTunnels()
    }
}
