import Foundation
import TestSupport
import Testing

/// `serializerd check`: every mistake of a file in one run, in file order; a valid file
/// lists its compiled routes.
@Suite struct CheckCommandTests {
    func write(_ yaml: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("check-\(UUID().uuidString).yaml").path
        try yaml.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func everyErrorOfTheFileInOneRunInFileOrder() throws {
        let path = try write("""
            defaults:
              timeout: whenever
            routes:
              - name: one
                match: { prefix: api }
                upstream: http://127.0.0.1:9/
              - name: two
                match: { prefix: /two/ }
                upstream: ftp://x/
              - name: three
                match: { prefix: /three/ }
                upstream: http://127.0.0.1:9/
                response: { serializer: json, remove_null_values: maybe }

            """)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try ServerBinary.run(["check", path])
        #expect(result.status == 1)
        let lines = result.stderrText.split(separator: "\n").map(String.init)
        // The defaults' bad value once, at its own line, not once per route it merges into.
        #expect(lines == [
            "\(path):2:12: error: defaults.timeout: expected a positive duration like 250ms, 10s or 2m, found 'whenever'",
            "\(path):5:22: error: routes[0].match.prefix: a prefix starts with '/', found 'api'",
            "\(path):9:15: error: routes[1].upstream: expected an http:// or https:// URL without query or credentials, found 'ftp://x/'",
            "\(path):13:55: error: routes[2].response.remove_null_values: expected true or false, found 'maybe'",
            "4 errors",
        ], "\(result.stderrText)")
    }

    @Test func aValidFileListsItsRoutesAndTheFlagFormStillWorks() throws {
        let path = try write("""
            listen: 127.0.0.1:9999
            routes:
              - name: api
                match: { prefix: /api/, methods: [GET] }
                upstream: http://127.0.0.1:9/v1
              - name: feed
                match: { prefix: /feed/ }
                upstream: http://127.0.0.1:9/
                request: { serializer: json }
                response: { serializer: compound, serializers: [xml, json] }

            """)
        defer { try? FileManager.default.removeItem(atPath: path) }
        for arguments in [["check", path], ["check", "--config", path]] {
            let result = try ServerBinary.run(arguments)
            #expect(result.status == 0, "\(result.stderrText)")
            let lines = result.stdoutText.split(separator: "\n").map { $0.split(separator: " ").joined(separator: " ") }
            #expect(lines == [
                "\(path): ok, 2 routes, listening on 127.0.0.1:9999",
                "api /api/ GET → http://127.0.0.1:9/v1/ request: passthrough response: json",
                "feed /feed/ → http://127.0.0.1:9/ request: json response: compound(xml,json)",
            ], "\(result.stdoutText)")
        }
        let both = try ServerBinary.run(["check", "--config", path, path])
        #expect(both.status != 0 && both.stderrText.contains("not both"))
    }
}

/// `serializerd serve --upstream URL [--serializer NAME]`: a first try without YAML.
@Suite(.timeLimit(.minutes(5)))
struct ServeWithoutAConfigTests {
    @Test func oneRouteAtTheRootProxiesToTheUpstream() throws {
        let (stub, stubPort) = try StubUpstream.start()
        defer { stub.stop() }
        let (daemon, port) = try DaemonUnderTest.start(arguments: ["serve", "--upstream", "http://127.0.0.1:\(stubPort)/v1",
                                                                   "--serializer", "xml", "--listen", "127.0.0.1:0"])
        defer { daemon.stop() }
        let xml = try RawHTTP.request(port: port, target: "/xml")
        #expect(xml.status == 200 && xml.text == #"{"rss":{"channel":{"item":{"t":"a"}}}}"#)
        let routes = try RawHTTP.request(port: port, target: "/-/routes").text
        #expect(routes.contains(#""name":"default","prefix":"/""#) && routes.contains(#""response_serializer":"xml""#))
    }

    @Test func badValuesNameTheirFlag() throws {
        let url = try ServerBinary.run(["serve", "--upstream", "ftp://example.test/"], timeout: 10)
        #expect(url.status == 78 && url.stderrText.contains("serializerd: error: --upstream: expected an http:// or https:// URL"))
        let name = try ServerBinary.run(["serve", "--upstream", "http://127.0.0.1:9/", "--serializer", "yaml"], timeout: 10)
        #expect(name.status == 78 && name.stderrText.contains("serializerd: error: --serializer: unknown serializer 'yaml'"))
        let both = try ServerBinary.run(["serve", "--upstream", "http://127.0.0.1:9/", "--config", "x.yaml"], timeout: 10)
        #expect(both.status == 64 && both.stderrText.contains("leave out --config"))
    }
}
