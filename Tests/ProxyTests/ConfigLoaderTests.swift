import Foundation
@testable import Proxy
import HTTPCore
import Serializers
import TestSupport
import Testing

@Suite struct ConfigLoaderTests {
    func load(_ yaml: String, env: [String: String] = [:]) throws -> ServerConfig {
        try ConfigLoader.load(yaml: yaml, file: "test.yaml", environment: env, state: ProcessState())
    }

    func failure(_ yaml: String, env: [String: String] = [:]) -> String {
        do { _ = try load(yaml, env: env); return "no error" } catch { return "\(error)" }
    }

    let route = "routes:\n  - name: api\n    match: { prefix: /api/ }\n    upstream: http://127.0.0.1:9/v1\n"

    @Test func loadsWithOneStateShareJarsAndReachability() throws {
        let yaml = route + "    cookies: jar\n"
        let state = ProcessState()
        let first = try ConfigLoader.load(yaml: yaml, file: "test.yaml", environment: [:], state: state).routes[0]
        let reloaded = try ConfigLoader.load(yaml: yaml, file: "test.yaml", environment: [:], state: state).routes[0]
        let other = try ConfigLoader.load(yaml: yaml, file: "test.yaml", environment: [:], state: ProcessState()).routes[0]
        #expect(first.cookies === reloaded.cookies && first.cookies != nil)
        #expect(first.reachability === reloaded.reachability)
        #expect(first.cookies !== other.cookies)
        #expect(first.reachability !== other.reachability)
    }

    @Test func shippedConfigLoads() throws {
        let text = try String(contentsOfFile: Fixture.directory.deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("config/serializerd.yaml").path, encoding: .utf8)
        let config = try load(text)
        #expect(config.routes.map(\.name) == ["github", "feed", "legacy-jsonp"])
        #expect(config.listen == ListenAddress(host: "127.0.0.1", port: 8080))
    }

    @Test func designExampleLoadsWithItsEnvironment() throws {
        let text = try String(contentsOfFile: Fixture.path("config/design-example.yaml"), encoding: .utf8)
        let config = try load(text, env: ["GITHUB_TOKEN": "t0ken"])
        let github = try #require(config.routes.first)
        #expect(github.headers.first("Authorization") == "Bearer t0ken")
        #expect(github.timeout == 10 && github.followRedirects == 5)
        #expect(github.response.acceptableStatusCodes == .successful)
        #expect(config.routes[2].response.serializers == [.json, .image])
        #expect(config.routes[3].host == "api.example.com")
        #expect(config.limits.maxResponseBody == 32 << 20 && config.timeouts.upstream == 30)
    }

    @Test func defaultsAreApplied() throws {
        let config = try load(route)
        let api = try #require(config.routes.first)
        #expect(api.upstream.description == "http://127.0.0.1:9/v1/")
        #expect(api.response.serializer == .json && api.requestSerializerName == "passthrough")
        #expect(api.methods == nil && api.timeout == 30 && api.output == OutputSettings())
        #expect(config.adminAllow.count == 2 && config.workers == nil && config.keepFailures)
        #expect(try load("admin: { keep_failures: false }\n" + route).keepFailures == false)
    }

    @Test func routeValuesOverrideDefaultsKeyByKey() throws {
        let config = try load("defaults:\n  response: { serializer: xml, acceptable_status_codes: [200, 404] }\n  timeout: 2s\n" + route
                              + "    response: { serializer: json }\n")
        let api = try #require(config.routes.first)
        #expect(api.response.serializer == .json)
        #expect(api.response.acceptableStatusCodes == StatusCodeSet([200...200, 404...404]))
        #expect(api.timeout == 2)
    }

    @Test(arguments: [
        ("listen: nowhere\n", "test.yaml:1:9: error: listen: expected host:port"),
        ("bogus: 1\n", "test.yaml:1:1: error: bogus: unknown key"),
        ("limits: { max_request_body: lots }\n", "test.yaml:1:29: error: limits.max_request_body: expected a positive size"),
        ("timeouts: { upstream: soon }\n", "test.yaml:1:23: error: timeouts.upstream: expected a positive duration"),
        ("workers: 0\n", "test.yaml:1:10: error: workers: expected an integer from 1 to 256"),
        ("admin: { allow: [10.0.0.0/33] }\n", "test.yaml:1:18: error: admin.allow[0]: expected an address or network"),
        ("admin: { keep_failures: sometimes }\n", "test.yaml:1:25: error: admin.keep_failures: expected true or false"),
        ("log: { level: loud }\n", "test.yaml:1:15: error: log.level: expected one of"),
        ("listen: [1, 2\n", "test.yaml:2:7: error: YAML syntax: did not find expected ',' or ']'"),
    ])
    func topLevelMistakesNameTheirPosition(prefix: String, expected: String) {
        #expect(failure(prefix + route).hasPrefix(expected), "\(failure(prefix + route))")
    }

    @Test(arguments: [
        ("    timeout: 1x\n", "routes[0].timeout: expected a positive duration"),
        ("    response: { serializer: yaml }\n", "routes[0].response.serializer: unknown serializer 'yaml'"),
        ("    response: { serializer: json, xml: { namespaces: strip } }\n", "routes[0].response.xml: applies to the xml serializer, not json"),
        ("    response: { acceptable_status_codes: [2xx] }\n", "routes[0].response.acceptable_status_codes: '2xx' is not a status code"),
        ("    request: { serializer: xml }\n", "routes[0].request: unknown request serializer 'xml'"),
        ("    output: { on_failure: explode }\n", "routes[0].output.on_failure: expected problem or passthrough"),
        ("    headers: { Authorization: \"Bearer ${TOKEN}\" }\n", "routes[0].headers.Authorization: environment variable TOKEN is not set"),
        ("    follow_redirects: -1\n", "routes[0].follow_redirects: expected an integer from 0 to 50"),
        ("    headers: { X-A: \"a\\nX-B: b\" }\n", "routes[0].headers.X-A: header values cannot contain line breaks or NUL"),
        ("    headers: { X-A: \"a\\0b\" }\n", "routes[0].headers.X-A: header values cannot contain line breaks or NUL"),
        ("    accept_mimes: [a/b]\n", "routes[0].accept_mimes: unknown key"),
        ("    response: { serializer: xml, xml: { namespaces: drop } }\n", "routes[0].response.xml.namespaces: expected keep or strip, found 'drop'"),
        ("    response: { serializer: [json] }\n", "routes[0].response.serializer: expected a single value, found a list"),
        ("    response: { remove_null_values: maybe }\n", "routes[0].response.remove_null_values: expected true or false, found 'maybe'"),
        ("    response: { serializer: json, image: {} }\n", "routes[0].response.image: applies to the image serializer, not json"),
    ])
    func routeMistakesNameTheirKey(extra: String, expected: String) {
        let message = failure(route + extra)
        #expect(message.contains(expected), "\(message)")
        #expect(message.hasPrefix("test.yaml:"), "\(message)")
    }

    @Test func structuralRouteMistakes() {
        #expect(failure("routes:\n  - name: Bad Name\n    match: { prefix: /a/ }\n    upstream: http://h/\n").contains("route names use a-z"))
        #expect(failure("routes:\n  - name: a\n    match: { prefix: /metrics }\n    upstream: http://h/\n").contains("reserved admin path"))
        #expect(failure("routes:\n  - name: a\n    match: { prefix: /-/x }\n    upstream: http://h/\n").contains("reserved admin path"))
        #expect(failure("routes:\n  - name: a\n    match: { prefix: /me }\n    upstream: http://h/\n") == "no error")
        #expect(failure("routes:\n  - name: a\n    match: { prefix: /a/ }\n    upstream: ftp://h/\n").contains("expected an http:// or https:// URL"))
        #expect(failure("routes:\n  - name: a\n    match: { prefix: a }\n    upstream: http://h/\n").contains("a prefix starts with '/'"))
        #expect(failure("routes:\n  - name: a\n    upstream: http://h/\n").contains("missing required key 'match'"))
        #expect(failure(route + "  - name: api\n    match: { prefix: /b/ }\n    upstream: http://h/\n").contains("route name 'api' is used twice"))
        #expect(failure("listen: 127.0.0.1:1\n").contains("missing required key 'routes'"))
        #expect(failure("").contains("the file is empty"))
    }

    @Test func unitsParse() {
        #expect(Units.seconds("250ms") == 0.25 && Units.seconds("2m") == 120 && Units.seconds("1.5s") == 1.5)
        #expect(Units.seconds("10") == nil && Units.seconds("s") == nil && Units.seconds("-1s") == nil)
        #expect(Units.bytes("512KiB") == 524_288 && Units.bytes("32MiB") == 33_554_432 && Units.bytes("10MB") == 10_000_000)
        #expect(Units.bytes("100") == 100 && Units.bytes("1TiB") == nil && Units.bytes("-5B") == nil)
    }

    @Test func addressesAndNetworks() {
        #expect(ListenAddress("[::1]:0") == ListenAddress(host: "::1", port: 0))
        #expect(ListenAddress("127.0.0.1:65536") == nil && ListenAddress("example.com:80") == nil)
        let loopback = CIDR("127.0.0.0/8")!
        #expect(loopback.contains(IPAddress("127.1.2.3")!) && !loopback.contains(IPAddress("128.0.0.1")!))
        #expect(loopback.contains(IPAddress("::ffff:127.0.0.1")!))
        #expect(CIDR("::1/128")!.contains(IPAddress("::1")!) && !CIDR("::1/128")!.contains(IPAddress("::2")!))
    }
}
