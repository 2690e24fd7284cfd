internal import CLibevent
#if canImport(Glibc)
import Glibc
#endif

/// Limits the evhttp server enforces itself (what it refuses gets libevent's own reply).
public struct HTTPServerSettings: Sendable {
    public var maxHeaderBytes: Int
    public var maxBodyBytes: Int
    public var idleTimeout: Double

    public init(maxHeaderBytes: Int, maxBodyBytes: Int, idleTimeout: Double) {
        self.maxHeaderBytes = maxHeaderBytes
        self.maxBodyBytes = maxBodyBytes
        self.idleTimeout = idleTimeout
    }
}

/// libevent's evhttp on one loop, accepting on sockets this worker owns (evhttp closes
/// them when it is freed).
public final class HTTPServer {
    private let http: OpaquePointer
    private var bound: [OpaquePointer] = []
    private let handler: (ServerRequest) -> Void

    public init(loop: EventLoop, sockets: [Int32], settings: HTTPServerSettings,
                handler: @escaping (ServerRequest) -> Void) throws(EventLoopError) {
        guard let http = evhttp_new(loop.base) else { throw EventLoopError("evhttp_new failed") }
        self.http = http
        self.handler = handler
        apply(settings)
        // Every method reaches the router, which answers 405 where a route refuses one.
        let all = EVHTTP_REQ_GET.rawValue | EVHTTP_REQ_POST.rawValue | EVHTTP_REQ_HEAD.rawValue | EVHTTP_REQ_PUT.rawValue
            | EVHTTP_REQ_DELETE.rawValue | EVHTTP_REQ_OPTIONS.rawValue | EVHTTP_REQ_TRACE.rawValue
            | EVHTTP_REQ_CONNECT.rawValue | EVHTTP_REQ_PATCH.rawValue
        evhttp_set_allowed_methods(http, UInt16(all))
        evhttp_set_gencb(http, HTTPServer.requestCallback, Unmanaged.passUnretained(self).toOpaque())
        for fd in sockets {
            guard let handle = evhttp_accept_socket_with_handle(http, fd) else {
                evhttp_free(http)
                throw EventLoopError("evhttp_accept_socket failed")
            }
            bound.append(handle)
        }
    }

    /// Limits for connections accepted from now on (evhttp copies them per connection).
    public func apply(_ settings: HTTPServerSettings) {
        evhttp_set_max_headers_size(http, settings.maxHeaderBytes)
        evhttp_set_max_body_size(http, settings.maxBodyBytes)
        var tv = timeval(seconds: settings.idleTimeout)
        evhttp_set_timeout_tv(http, &tv)
    }

    /// Stops accepting new connections; open ones keep being served.
    public func stopAccepting() {
        for handle in bound { evhttp_del_accept_socket(http, handle) }
        bound = []
    }

    /// Frees evhttp (and with it every open connection). Only after the loop stopped.
    public func close() {
        evhttp_free(http)
    }

    /// evhttp_set_gencb
    static let requestCallback: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { req, arg in
        guard let req, let arg else { return }
        Unmanaged<HTTPServer>.fromOpaque(arg).takeUnretainedValue().accept(req)
    }

    /// TCP_NODELAY comes from the listening socket (Linux copies it to accepted ones;
    /// `ListeningSocket` sets it on every listener, bound or inherited), so no
    /// setsockopt per request.
    func accept(_ req: OpaquePointer) {
        handler(ServerRequest(req))
    }
}
