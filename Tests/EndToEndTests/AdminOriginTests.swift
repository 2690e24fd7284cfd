import Foundation
import TestSupport
import Testing

/// Admin answers only to names a web page cannot claim (the DNS-rebinding guard), every
/// Host is checked, and the headers serializerd adds itself are right.
@Suite(.timeLimit(.minutes(5)))
struct AdminOriginTests {
    /// HTTP/1.0 may omit Host: that counts as loopback. (Which names reach admin is tested
    /// in process: ProxyTests' AdminHostTests.)
    @Test func anHTTP10RequestWithoutHostReachesAdmin() throws {
        let proxy = try ProxyHarness(routes: route("api", prefix: "/api/"))
        defer { proxy.finish() }
        let raw = try RawHTTP.exchange(port: proxy.port, bytes: Array("GET /-/health HTTP/1.0\r\n\r\n".utf8), timeout: 10)
        #expect(String(decoding: raw, as: UTF8.self).hasPrefix("HTTP/1.1 200"))
    }

    @Test func aHostThatIsNotAURIHostIsABadRequest() throws {
        let proxy = try ProxyHarness(routes: route("api", prefix: "/api/"))
        defer { proxy.finish() }
        for host in ["a b", "a/b", "x@y", "[::1", "h:99999x", "h:65536", "h:1:2", "[::1]x", "a%zz", "[]"] {
            for path in ["/api/json", "/-/health"] {
                let reply = try proxy.get(path, host: host)
                #expect(reply.status == 400, "\(host) \(path)")
                #expect(proxy.json(reply)?["type"] as? String == "urn:serializerd:bad-request", "\(host) \(path)")
                #expect((proxy.json(reply)?["detail"] as? String)?.contains("Host") == true, "\(host) \(path)")
            }
        }
        // Valid, and answered — or, for a name that is not this daemon's, refused as such.
        for host in ["a.b-c_d~e", "h:", "h:0", "%41.example"] {
            #expect(try proxy.get("/api/json", host: host).status == 421, "\(host)")
        }
        for host in ["[::1]:1", "192.0.2.1:65535", "localhost:", "a.localhost:0"] {
            #expect(try proxy.get("/api/json", host: host).status == 200, "\(host)")
        }
    }

    @Test func harURLsNameServerializerdNotTheClientsHost() throws {
        let proxy = try ProxyHarness(routes: route("api", prefix: "/api/"), top: "hosts: [attacker.example]\n")
        defer { proxy.finish() }
        #expect(try proxy.get("/api/json", host: "attacker.example").status == 200)
        // The flow reaches the recent ring within a flush; poll for it.
        var har = try proxy.get("/-/recent?format=har", host: "localhost:1")
        let deadline = Date().addingTimeInterval(10)
        while !har.text.contains("/api/json") && Date() < deadline {
            usleep(20_000)
            har = try proxy.get("/-/recent?format=har", host: "localhost:1")
        }
        #expect(har.status == 200)
        #expect(!har.text.contains("attacker.example") && !har.text.contains("localhost:1"))
        #expect(har.text.contains("\"url\":\"http://127.0.0.1:\(proxy.port)/api/json\""), "\(har.text)")
    }

    @Test func everyReplyCarriesExactlyOneDate() throws {
        let proxy = try ProxyHarness(routes: route("api", prefix: "/api/")
            + route("raw", prefix: "/raw/", extra: "    output: { on_failure: passthrough }\n"))
        defer { proxy.finish() }
        let upstreamDate = "Sun, 06 Nov 1994 08:49:37 GMT"
        let date = upstreamDate.replacingOccurrences(of: " ", with: "%20").replacingOccurrences(of: ",", with: "%2C")
        let cases: [(String, String?)] = [
            ("/api/json?date=\(date)", upstreamDate),                  // success: the upstream's
            ("/raw/json?type=text/html&date=\(date)", upstreamDate),   // passthrough: the upstream's
            ("/api/json?date=yesterday", nil),                         // invalid: ours
            ("/api/json?status=404&date=\(date)", upstreamDate),       // a problem about an answer: the upstream's
            ("/-/health", nil), ("/nowhere", nil),
        ]
        for (path, expected) in cases {
            let reply = try proxy.get(path)
            let dates = reply.headers.filter { $0.0.lowercased() == "date" }.map(\.1)
            #expect(dates.count == 1, "\(path): \(reply.headers)")
            if let expected { #expect(dates.first == expected, "\(path)") } else {
                #expect(dates.first != upstreamDate && dates.first?.hasSuffix(" GMT") == true, "\(path): \(dates)")
            }
        }
    }
}
