@testable import Proxy
import Testing

/// The admin table: how a path and a method find a handler, in process, and what each
/// endpoint answers through it.
@Suite struct AdminRouterTests {
    let router = AdminRouter<String>([
        (["GET", "HEAD"], "/-/health", "health"),
        (["GET", "HEAD", "DELETE"], "/-/cache", "cache"),
        (["GET", "HEAD", "DELETE"], "/-/cache/*", "cache route"),
        (["GET", "HEAD"], "/-/failures/*", "failure"),
        (["GET", "HEAD"], "/-/failures/*/body", "failure body"),
        (["PUT"], "/-/failures/*/body", "failure body put"),
    ])

    func found(_ method: String, _ path: String) -> String {
        switch router.match(method: method, path: path) {
        case .handler(let name, let parameter): parameter.isEmpty ? name : name + "(" + parameter + ")"
        case .methodNotAllowed(let allow): "405 " + allow.joined(separator: ",")
        case .notFound: "404"
        }
    }

    @Test func pathsFindTheirHandlerAndItsSegment() {
        #expect(found("GET", "/-/health") == "health")
        #expect(found("DELETE", "/-/cache") == "cache")
        #expect(found("DELETE", "/-/cache/api") == "cache route(api)")
        #expect(found("GET", "/-/failures/a%2Fb") == "failure(a%2Fb)")
        #expect(found("HEAD", "/-/failures/x/body") == "failure body(x)")
        #expect(found("PUT", "/-/failures/x/body") == "failure body put(x)")
        // A `*` is one segment, never empty; a literal `*` in the path is just a segment.
        #expect(found("GET", "/-/cache/") == "404")
        #expect(found("GET", "/-/cache/a/b") == "404")
        #expect(found("GET", "/-/cache/*") == "cache route(*)")
        #expect(found("GET", "/-/healthz") == "404" && found("GET", "/-/health/") == "404")
    }

    @Test func anotherMethodIsRefusedWithTheTablesMethods() {
        #expect(found("POST", "/-/health") == "405 GET,HEAD")
        #expect(found("POST", "/-/cache/api") == "405 GET,HEAD,DELETE")
        // Every pattern the path matches adds its methods, once each.
        #expect(found("DELETE", "/-/failures/x/body") == "405 GET,HEAD,PUT")
        #expect(found("POST", "/-/nothing") == "404")
    }

    @Test func everyEndpointOfTheTableAnswersInProcess() throws {
        let proxy = try InProcessProxy(routes: route("api", prefix: "/api/") + "    cookies: jar\n    cache: {}\n")
        #expect(proxy.get("/api/json?type=text/html").status == 502)   // a failure to show
        let id = try #require(proxy.get("/-/failures").replyJSON?["failures"] as? [[String: Any]]).first?["request_id"] as? String
        let expected: [(String, Int, String)] = [
            ("/metrics", 200, "text/plain"), ("/-/health", 200, "application/json"), ("/-/routes", 200, "application/json"),
            ("/-/recent", 200, "application/json"), ("/-/recent?format=har", 200, "application/json"),
            ("/-/failures", 200, "application/json"), ("/-/failures/\(id ?? "")", 200, "application/json"),
            ("/-/failures/\(id ?? "")/body", 200, "application/octet-stream"), ("/-/failures/nope", 404, "application/problem+json"),
            ("/-/ui", 200, "text/html"), ("/-/ui/", 200, "text/html"), ("/-/ui/app.js", 200, "text/javascript"),
            ("/-/ui/app.css", 200, "text/css"), ("/-/tapes", 200, "application/json"), ("/-/tapes/api", 404, "application/problem+json"),
            ("/-/cache", 200, "application/json"), ("/-/cache/api", 200, "application/json"), ("/-/cookies/api", 200, "application/json"),
            ("/-/inflight", 200, "application/json"), ("/-/network", 200, "application/json"), ("/-/network/api", 200, "application/json"),
            ("/-/network/nope", 404, "application/problem+json"), ("/-/nothing", 404, "application/problem+json"),
        ]
        for (path, status, type) in expected {
            let reply = proxy.get(path)
            #expect(reply.status == status, "\(path)")
            #expect(reply.replyHeader("Content-Type")?.hasPrefix(type) == true, "\(path): \(reply.replyHeader("Content-Type") ?? "-")")
        }
        let refused = proxy.get("/-/network/api", method: "PUT")
        #expect(refused.status == 405 && refused.replyHeader("Allow") == "GET, HEAD, DELETE")
        #expect(proxy.get("/-/cache/api", method: "DELETE").replyJSON?["route"] as? String == "api")
    }
}
