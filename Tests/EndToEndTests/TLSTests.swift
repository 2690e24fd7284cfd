import Foundation
import TestSupport
import Testing

/// Certificates made by `openssl` for one test run: a CA and what it signs, and the
/// certificates a careful client refuses.
final class TLSFixture {
    let dir: String

    init() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("tls-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: false)
        try ca("ca")
        try ca("other-ca")
        try signed("server", by: "ca", san: "IP:127.0.0.1,DNS:localhost")
        try signed("wrong-name", by: "ca", san: "DNS:other.example")
        try signed("expired", by: "ca", san: "IP:127.0.0.1", days: -1)
        try signed("client", by: "ca", san: "DNS:client.test", clientAuth: true)
        try signed("stranger", by: "other-ca", san: "DNS:client.test", clientAuth: true)
        try openssl(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", path("self.key"),
                     "-out", path("self.pem"), "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"])
        try openssl(["pkey", "-in", path("client.key"), "-aes256", "-passout", "pass:secret", "-out", path("client-encrypted.key")])
    }

    deinit { try? FileManager.default.removeItem(atPath: dir) }

    func path(_ name: String) -> String { dir + "/" + name }

    @discardableResult
    func openssl(_ arguments: [String], stdin: [UInt8] = []) throws -> [UInt8] {
        let run = try ServerBinary.run(arguments, stdin: stdin, executable: URL(fileURLWithPath: "/usr/bin/openssl"))
        guard run.status == 0 else { throw TestFailure("openssl \(arguments.joined(separator: " ")): \(run.stderrText)") }
        return run.stdout
    }

    func ca(_ name: String) throws {
        try openssl(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", path(name + ".key"),
                     "-out", path(name + ".pem"), "-days", "2", "-subj", "/CN=\(name)"])
    }

    func signed(_ name: String, by ca: String, san: String, days: Int = 2, clientAuth: Bool = false) throws {
        try openssl(["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", path(name + ".key"),
                     "-subj", "/CN=\(name)", "-out", path(name + ".csr")])
        let ext = "subjectAltName=\(san)\n" + (clientAuth ? "extendedKeyUsage=clientAuth\n" : "")
        try ext.write(toFile: path(name + ".ext"), atomically: true, encoding: .utf8)
        try openssl(["x509", "-req", "-in", path(name + ".csr"), "-CA", path(ca + ".pem"), "-CAkey", path(ca + ".key"), "-CAcreateserial",
                     "-days", String(days), "-extfile", path(name + ".ext"), "-out", path(name + ".pem")])
    }

    /// `sha256//…` of a certificate's public key, as libcurl pins it.
    func pin(_ name: String) throws -> String {
        let key = try openssl(["x509", "-in", path(name + ".pem"), "-pubkey", "-noout"])
        let der = try openssl(["pkey", "-pubin", "-outform", "der"], stdin: key)
        let digest = try openssl(["dgst", "-sha256", "-binary"], stdin: der)
        return "sha256//" + Data(digest).base64EncodedString()
    }
}

/// A route's security policy (DESIGN §2 `tls:`) against real TLS upstreams: each setting
/// accepting what it should and refusing what it should, in words.
@Suite(.timeLimit(.minutes(5)))
struct TLSTests {
    /// A TLS stub presenting `certificate`, serializerd in front of it with `tls`.
    final class Setup {
        let stub: Spawned
        let daemon: Spawned
        let port: Int

        init(_ fixture: TLSFixture, certificate: String = "server", stubArguments: [String] = [], tls: String) throws {
            let (stub, stubPort) = try StubUpstream.start(["--tls", fixture.path(certificate + ".pem"), fixture.path(certificate + ".key")]
                                                          + stubArguments)
            self.stub = stub
            let yaml = "listen: 127.0.0.1:0\nworkers: 1\nroutes:\n  - name: api\n    match: { prefix: /api/ }\n"
                + "    upstream: https://127.0.0.1:\(stubPort)/v1\n    timeout: 5s\n" + (tls.isEmpty ? "" : "    tls: \(tls)\n")
            do {
                (daemon, port, _) = try DaemonUnderTest.start(config: yaml)
            } catch {
                stub.stop()
                throw error
            }
        }

        func get(_ target: String = "/api/json") throws -> RawResponse { try RawHTTP.request(port: port, target: target) }

        func finish() {
            _ = daemon.stop()
            stub.stop()
        }
    }

    static func detail(_ response: RawResponse) -> String {
        ((try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any])?["detail"] as? String ?? ""
    }

    static func code(_ response: RawResponse) -> Int? {
        ((try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any])?["code"] as? Int
    }

    @Test func aCustomCATrustsItsOwnAndOnlyThose() throws {
        let fixture = try TLSFixture()
        let trusted = try Setup(fixture, tls: "{ ca_file: \(fixture.path("ca.pem")) }")
        defer { trusted.finish() }
        #expect(try trusted.get().status == 200)
        // The system's roots do not know this CA: without ca_file, refused (60) in words.
        let system = try Setup(fixture, tls: "")
        defer { system.finish() }
        let refused = try system.get()
        #expect(refused.status == 502 && Self.code(refused) == 60)
        #expect(Self.detail(refused).contains("not trusted"))
        // Only the CA given: a certificate from another CA is refused even if the system knows it.
        for certificate in ["self", "wrong-name", "expired"] {
            let setup = try Setup(fixture, certificate: certificate, tls: "{ ca_file: \(fixture.path("ca.pem")) }")
            defer { setup.finish() }
            let reply = try setup.get()
            #expect(reply.status == 502 && Self.code(reply) == 60, "\(certificate): \(reply.text)")
        }
    }

    @Test func verifyFalseAcceptsAnyCertificateAndSaysSo() throws {
        let fixture = try TLSFixture()
        for certificate in ["self", "wrong-name", "expired"] {
            let setup = try Setup(fixture, certificate: certificate, tls: "{ verify: false }")
            defer { setup.finish() }
            #expect(try setup.get().status == 200, "\(certificate)")
            #expect(setup.daemon.waitForLine { $0.contains("\"msg\":\"tls_verify_off\"") && $0.contains("\"route\":\"api\"") } != nil)
            let routes = try setup.get("/-/routes").text
            #expect(routes.contains("\"tls\":{\"verify\":false"))
        }
    }

    @Test func pinsAcceptTheirKeyAndRefuseAnother() throws {
        let fixture = try TLSFixture()
        let ca = fixture.path("ca.pem")
        let right = try Setup(fixture, tls: "{ ca_file: \(ca), pinned_public_keys: [\"\(try fixture.pin("other-ca"))\", \"\(try fixture.pin("server"))\"] }")
        defer { right.finish() }
        #expect(try right.get().status == 200)
        let wrong = try Setup(fixture, tls: "{ ca_file: \(ca), pinned_public_keys: [\"\(try fixture.pin("client"))\"] }")
        defer { wrong.finish() }
        let refused = try wrong.get()
        #expect(refused.status == 502 && Self.code(refused) == 90)
        #expect(Self.detail(refused).contains("pinned_public_keys"))
        // A thousand pins, the right one last.
        let many = (0..<999).map { "\"sha256//\(Data(repeating: UInt8($0 % 256), count: 32).base64EncodedString())\"" } + ["\"\(try fixture.pin("server"))\""]
        let thousand = try Setup(fixture, tls: "{ ca_file: \(ca), pinned_public_keys: [\(many.joined(separator: ", "))] }")
        defer { thousand.finish() }
        #expect(try thousand.get().status == 200)
    }

    @Test func routesToOneHostNeverShareAPolicy() throws {
        // One daemon, one worker, one upstream: a route that accepts anything and a route
        // whose pin the upstream does not match. Neither's handles nor connections serve
        // the other, in either order.
        let fixture = try TLSFixture()
        let (stub, stubPort) = try StubUpstream.start(["--tls", fixture.path("server.pem"), fixture.path("server.key")])
        defer { stub.stop() }
        let upstream = "https://127.0.0.1:\(stubPort)/v1"
        let yaml = "listen: 127.0.0.1:0\nworkers: 1\nroutes:\n"
            + "  - name: open\n    match: { prefix: /open/ }\n    upstream: \(upstream)\n    tls: { verify: false }\n"
            + "  - name: pinned\n    match: { prefix: /pinned/ }\n    upstream: \(upstream)\n"
            + "    tls: { verify: false, pinned_public_keys: [\"\(try fixture.pin("client"))\"] }\n"
            + "  - name: system\n    match: { prefix: /system/ }\n    upstream: \(upstream)\n"
        let (daemon, port, _) = try DaemonUnderTest.start(config: yaml)
        defer { _ = daemon.stop() }
        for _ in 0..<3 {
            #expect(try RawHTTP.request(port: port, target: "/open/json").status == 200)
            #expect(Self.code(try RawHTTP.request(port: port, target: "/pinned/json")) == 90)
            #expect(Self.code(try RawHTTP.request(port: port, target: "/system/json")) == 60)
        }
    }

    @Test func aChainTwentyDeepIsVerifiedToItsRoot() throws {
        let fixture = try TLSFixture()
        // ca → i1 → … → i20 → leaf; the upstream presents the leaf and every intermediate.
        var issuer = "ca"
        var chain: [String] = []
        for depth in 1...20 {
            let name = "i\(depth)"
            try fixture.openssl(["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", fixture.path(name + ".key"),
                                 "-subj", "/CN=\(name)", "-out", fixture.path(name + ".csr")])
            try "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign\n".write(toFile: fixture.path(name + ".ext"), atomically: true, encoding: .utf8)
            try fixture.openssl(["x509", "-req", "-in", fixture.path(name + ".csr"), "-CA", fixture.path(issuer + ".pem"), "-CAkey", fixture.path(issuer + ".key"),
                                 "-CAcreateserial", "-days", "2", "-extfile", fixture.path(name + ".ext"), "-out", fixture.path(name + ".pem")])
            chain.insert(name, at: 0)
            issuer = name
        }
        try fixture.signed("deep", by: issuer, san: "IP:127.0.0.1")
        let pems = try (["deep"] + chain).map { try String(contentsOfFile: fixture.path($0 + ".pem"), encoding: .utf8) }
        try pems.joined().write(toFile: fixture.path("deep-chain.pem"), atomically: true, encoding: .utf8)
        try FileManager.default.copyItem(atPath: fixture.path("deep.key"), toPath: fixture.path("deep-chain.key"))
        let setup = try Setup(fixture, certificate: "deep-chain", tls: "{ ca_file: \(fixture.path("ca.pem")) }")
        defer { setup.finish() }
        #expect(try setup.get().status == 200)
    }

    @Test func aClientCertificateOpensMutualTLS() throws {
        let fixture = try TLSFixture()
        let ca = fixture.path("ca.pem")
        let mutual = ["--client-ca", ca]
        let with = try Setup(fixture, stubArguments: mutual,
                             tls: "{ ca_file: \(ca), client_certificate: \(fixture.path("client.pem")), client_key: \(fixture.path("client.key")) }")
        defer { with.finish() }
        #expect(try with.get().status == 200)
        let without = try Setup(fixture, stubArguments: mutual, tls: "{ ca_file: \(ca) }")
        defer { without.finish() }
        let refused = try without.get()
        #expect(refused.status == 502 && Self.code(refused) != nil, "\(refused.text)")
        let stranger = try Setup(fixture, stubArguments: mutual,
                                 tls: "{ ca_file: \(ca), client_certificate: \(fixture.path("stranger.pem")), client_key: \(fixture.path("stranger.key")) }")
        defer { stranger.finish() }
        #expect(try stranger.get().status == 502)
    }

    @Test func minVersionRefusesAnOlderUpstream() throws {
        let fixture = try TLSFixture()
        let ca = fixture.path("ca.pem")
        let old = try Setup(fixture, stubArguments: ["--tls12"], tls: "{ ca_file: \(ca), min_version: \"1.3\" }")
        defer { old.finish() }
        let refused = try old.get()
        #expect(refused.status == 502 && Self.code(refused) == 35 && Self.detail(refused).contains("handshake"))
        let fine = try Setup(fixture, stubArguments: ["--tls12"], tls: "{ ca_file: \(ca), min_version: \"1.2\" }")
        defer { fine.finish() }
        #expect(try fine.get().status == 200)
    }

    @Test func badFilesAreConfigErrorsWithTheirPosition() throws {
        let fixture = try TLSFixture()
        let big = fixture.path("big.pem")
        FileManager.default.createFile(atPath: big, contents: nil)
        let handle = try #require(FileHandle(forWritingAtPath: big))
        try handle.truncate(atOffset: 5 << 20)
        try handle.close()
        try "not a certificate\n".write(toFile: fixture.path("junk.pem"), atomically: true, encoding: .utf8)
        let cases: [(String, String)] = [
            ("{ ca_file: \(fixture.path("missing.pem")) }", "No such file"),
            ("{ ca_file: \(fixture.dir) }", "is not a regular file"),
            ("{ ca_file: \(big) }", "at most 4194304 bytes"),
            ("{ ca_file: \(fixture.path("junk.pem")) }", "no PEM certificate"),
            ("{ client_certificate: \(fixture.path("client.pem")) }", "needs client_key"),
            ("{ client_certificate: \(fixture.path("client.pem")), client_key: \(fixture.path("server.key")) }", "does not belong"),
            ("{ client_certificate: \(fixture.path("client.pem")), client_key: \(fixture.path("client-encrypted.key")) }", "encrypted with a passphrase"),
            ("{ pinned_public_keys: [\"sha256//short\"] }", "expected sha256//"),
            ("{ min_version: \"1.1\" }", "expected 1.2 or 1.3"),
            ("{ verify: maybe }", "expected"),
        ]
        for (tls, message) in cases {
            let run = try checkRoute("tls", tls, upstream: "https://127.0.0.1:9/")
            #expect(run.status != 0, "\(tls)")
            #expect(run.stderrText.contains(".yaml:5:") && run.stderrText.contains(message), "\(tls): \(run.stderrText)")
        }
        // check warns about verify: false.
        let run = try checkRoute("tls", "{ verify: false }", upstream: "https://127.0.0.1:9/")
        #expect(run.status == 0 && run.stdoutText.contains("warning: route 'api': tls.verify is false"), "\(run.stdoutText)")
    }
}
