import Foundation
import TestSupport
import Testing

/// A route's `http_version` (DESIGN §2) against nginx speaking HTTP/2 over TLS and h2c.
@Suite(.timeLimit(.minutes(5)))
struct HTTPVersionTests {
    /// nginx serving `{"h2":true}` at /v1/json: HTTP/2 over TLS on `tls`, h2c on `clear`.
    static func nginx(_ fixture: TLSFixture) throws -> (Spawned, tls: Int, clear: Int) {
        let (tls, clear) = (try LoopbackListener.freePort(), try LoopbackListener.freePort())
        let root = fixture.path("www")
        try FileManager.default.createDirectory(atPath: root + "/v1", withIntermediateDirectories: true)
        try #"{"h2":true}"#.write(toFile: root + "/v1/json", atomically: true, encoding: .utf8)
        let conf = """
            worker_processes 1; daemon off; pid \(fixture.path("nginx.pid")); error_log \(fixture.path("nginx-error.log"));
            events { worker_connections 256; }
            http {
                access_log off; default_type application/json;
                client_body_temp_path \(fixture.dir); proxy_temp_path \(fixture.dir); fastcgi_temp_path \(fixture.dir);
                uwsgi_temp_path \(fixture.dir); scgi_temp_path \(fixture.dir);
                server { listen 127.0.0.1:\(tls) ssl http2; ssl_certificate \(fixture.path("server.pem"));
                         ssl_certificate_key \(fixture.path("server.key")); root \(root); }
                server { listen 127.0.0.1:\(clear) http2; root \(root); }
            }
            """
        try conf.write(toFile: fixture.path("nginx.conf"), atomically: true, encoding: .utf8)
        let nginx = try Spawned(URL(fileURLWithPath: "/usr/sbin/nginx"), ["-p", fixture.dir, "-c", fixture.path("nginx.conf")])
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if (try? RawHTTP.connect(port: clear, timeout: 0.2)).map({ close($0); return true }) == true { return (nginx, tls, clear) }
            usleep(20_000)
        }
        nginx.stop()
        throw TestFailure("nginx did not start")
    }

    @Test func theVersionIsChosenPerRouteAndReported() throws {
        let fixture = try TLSFixture()
        let (nginx, tls, clear) = try Self.nginx(fixture)
        defer { nginx.stop() }
        let ca = "    tls: { ca_file: \(fixture.path("ca.pem")) }\n"
        let yaml = "listen: 127.0.0.1:0\nworkers: 1\nroutes:\n"
            + "  - name: auto\n    match: { prefix: /auto/ }\n    upstream: https://127.0.0.1:\(tls)/v1\n" + ca
            + "  - name: one\n    match: { prefix: /one/ }\n    upstream: https://127.0.0.1:\(tls)/v1\n    http_version: 1.1\n" + ca
            + "  - name: h2c\n    match: { prefix: /h2c/ }\n    upstream: http://127.0.0.1:\(clear)/v1\n    http_version: 2\n"
        let (daemon, port, _) = try DaemonUnderTest.start(config: yaml)
        defer { _ = daemon.stop() }
        for prefix in ["auto", "one", "h2c"] {
            for _ in 0..<3 {
                let reply = try RawHTTP.request(port: port, target: "/\(prefix)/json")
                #expect(reply.status == 200 && reply.text == #"{"h2":true}"#, "\(prefix): \(reply.text)")
            }
        }
        // Events reach the recent list in batches: wait for all nine.
        var events: [[String: Any]] = []
        let deadline = Date().addingTimeInterval(10)
        while events.count < 9 && Date() < deadline {
            let recent = try RawHTTP.request(port: port, target: "/-/recent").text
            events = (((try? JSONSerialization.jsonObject(with: Data(recent.utf8))) as? [String: Any])?["events"] as? [[String: Any]] ?? [])
                .filter { ["auto", "one", "h2c"].contains($0["route"] as? String ?? "") }
            if events.count < 9 { usleep(20_000) }
        }
        let versions = Dictionary(grouping: events, by: { $0["route"] as? String ?? "" }).mapValues { Set($0.compactMap { $0["http_version"] as? String }) }
        #expect(versions["auto"] == ["2"] && versions["one"] == ["1.1"] && versions["h2c"] == ["2"], "\(versions)")
        let metrics = Metrics(try RawHTTP.request(port: port, target: "/metrics").text)
        #expect(metrics["serializerd_upstream_requests_total{route=\"auto\",http_version=\"2\"}"] == 3)
        #expect(metrics["serializerd_upstream_requests_total{route=\"one\",http_version=\"1.1\"}"] == 3)
        #expect(metrics["serializerd_upstream_requests_total{route=\"h2c\",http_version=\"2\"}"] == 3)
        // The full HAR's upstream entry says it too.
        let har = try RawHTTP.request(port: port, target: "/-/recent?format=har").text
        #expect(har.contains(#""httpVersion":"HTTP/2""#))
    }

    @Test func aBadSettingIsAConfigError() throws {
        let run = try checkRoute("http_version", "3")
        #expect(run.status != 0 && run.stderrText.contains(":5:") && run.stderrText.contains("expected auto, 1.1 or 2, found '3'"))
    }
}
