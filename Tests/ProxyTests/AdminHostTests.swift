@testable import Proxy
import Testing

/// Admin answers only to names a web page cannot claim (the DNS-rebinding guard), in
/// process: the `Host` a request names decides, whatever the route.
@Suite struct AdminHostTests {
    static let adminPaths = ["/-/ui", "/-/ui/app.js", "/-/ui/app.css", "/-/events", "/-/recent", "/-/recent?format=har",
                             "/-/failures", "/-/failures/some-id", "/-/failures/some-id/body", "/-/health", "/-/routes", "/metrics",
                             "/-/cache", "/-/inflight", "/-/tapes"]

    @Test func aForeignHostGetsForbiddenFromEveryAdminEndpoint() throws {
        let proxy = try InProcessProxy(routes: route("api", prefix: "/api/"))
        // Something to read: a failure and a recent flow.
        #expect(proxy.get("/api/json?type=text/html").status == 502)
        for host in ["evil.example", "evil.example:8080", "127.0.0.1.evil.example", "localhost.evil.example", "EVIL.example.", "", ":8080"] {
            for path in Self.adminPaths {
                let reply = proxy.get(path, host: host)
                #expect(reply.status == 403, "\(host) \(path)")
                #expect(reply.replyJSON?["type"] as? String == "urn:serializerd:forbidden", "\(host) \(path)")
                #expect((reply.replyJSON?["detail"] as? String)?.contains("admin.hosts") == true, "\(host) \(path)")
                #expect(reply.replyHeader("Content-Type") == "application/problem+json", "\(host) \(path)")
                #expect(reply.replyHeader("Access-Control-Allow-Origin") == nil)
                #expect(!reply.text.contains("text/html") && !reply.text.contains("serializerd_requests_total"), "\(host) \(path)")
            }
        }
        // Routes have their own rule (a 421, EndToEndTests' HostRuleTests), not admin's 403.
        #expect(proxy.get("/api/json", host: "evil.example").status == 421)
        #expect(proxy.get("/api/json", host: "app.localhost").status == 200)
    }

    @Test func loopbackNamesAndAddressesReachAdminWithAnyPort() throws {
        let proxy = try InProcessProxy(routes: route("api", prefix: "/api/"))
        for host in ["localhost", "LOCALHOST.:1", "localhost:65535", "127.0.0.1", "127.0.0.1:8080", "127.9.8.7:80",
                     "[::1]", "[::1]:8080", "[::ffff:127.0.0.1]:9"] {
            #expect(proxy.get("/-/health", host: host).status == 200, "\(host)")
            #expect(proxy.get("/metrics", host: host).status == 200, "\(host)")
        }
    }

    @Test func adminHostsAddsNamesAndNothingElse() throws {
        let proxy = try InProcessProxy(routes: route("api", prefix: "/api/"), top: "admin: { hosts: [Dev.Example.Test, 10.1.2.3] }\n")
        for host in ["dev.example.test", "DEV.example.test.:8080", "10.1.2.3:9090"] {
            #expect(proxy.get("/metrics", host: host).status == 200, "\(host)")
        }
        for host in ["example.test", "x.dev.example.test", "10.1.2.4"] {
            #expect(proxy.get("/metrics", host: host).status == 403, "\(host)")
        }
    }

    @Test func anAdminClientOutsideAdminAllowIsForbidden() throws {
        let proxy = try InProcessProxy(routes: route("api", prefix: "/api/"), top: "admin: { allow: [10.0.0.0/8] }\n")
        let forbidden = proxy.get("/-/health")
        #expect(forbidden.status == 403 && forbidden.replyJSON?["type"] as? String == "urn:serializerd:forbidden")
        #expect(proxy.get("/api/json").status == 200)
    }
}
