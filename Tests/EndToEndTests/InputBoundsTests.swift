import Foundation
import TestSupport
import Testing

/// The CLI reads bounded input: `transcode` stops one read past its cap, a config file
/// over 1 MiB is refused, and neither reads an endless source to its (missing) end.
@Suite(.timeLimit(.minutes(5)))
struct InputBoundsTests {
    static func expectTooLarge(_ result: CommandResult, limit: Int, _ what: String) {
        #expect(result.status == 1, "\(what): \(result.stderrText)")
        #expect(result.stdoutText.hasPrefix("{\"type\":\"urn:serializerd:upstream-body-too-large\""), "\(what): \(result.stdoutText)")
        #expect(result.stdoutText.contains("\(limit) bytes"), "\(what)")
    }

    @Test func transcodeRefusesEndlessAndHugeInputAtOnce() throws {
        let limit = 1 << 20
        let zero = try ServerBinary.run(["transcode", "--serializer", "json", "--max-response-body", "1MiB", "/dev/zero"], timeout: 20)
        Self.expectTooLarge(zero, limit: limit, "/dev/zero")
        let defaultCap = try ServerBinary.run(["transcode", "--serializer", "raw", "/dev/zero"], timeout: 20)
        Self.expectTooLarge(defaultCap, limit: 32 << 20, "/dev/zero at the default cap")
        // A sparse 3 GiB file: refused by its size, before any of it is read.
        let sparse = FileManager.default.temporaryDirectory.appendingPathComponent("sparse-\(UUID().uuidString)").path
        #expect(FileManager.default.createFile(atPath: sparse, contents: nil))
        defer { try? FileManager.default.removeItem(atPath: sparse) }
        #expect(truncate(sparse, 3 << 30) == 0)
        Self.expectTooLarge(try ServerBinary.run(["transcode", "--serializer", "json", sparse], timeout: 20), limit: 32 << 20, "sparse")
        // stdin without end.
        let shell = "yes '[1]' | '\(ServerBinary.url.path)' transcode --serializer json --max-response-body 1MiB -"
        let endless = try ServerBinary.run(["-c", shell], timeout: 20, executable: URL(fileURLWithPath: "/bin/sh"))
        Self.expectTooLarge(endless, limit: limit, "endless stdin")
        // At the cap exactly: still read and transcoded.
        let atCap = Array("\"".utf8) + Array(repeating: UInt8(ascii: "x"), count: 1022) + Array("\"".utf8)
        let fits = try ServerBinary.run(["transcode", "--serializer", "json", "--max-response-body", "1KiB", "-"], stdin: atCap)
        #expect(fits.status == 0 && fits.stdout.count == 1025, "\(fits.stdoutText.prefix(200))")
        let over = try ServerBinary.run(["transcode", "--serializer", "json", "--max-response-body", "1KiB", "-"], stdin: atCap + [0x20])
        Self.expectTooLarge(over, limit: 1024, "one byte over")
    }

    @Test func aConfigOverOneMebibyteIsAConfigError() throws {
        let big = FileManager.default.temporaryDirectory.appendingPathComponent("big-\(UUID().uuidString).yaml").path
        defer { try? FileManager.default.removeItem(atPath: big) }
        let route = "routes:\n  - name: a\n    match: { prefix: /a/ }\n    upstream: http://127.0.0.1:9/\n"
        try (route + String(repeating: "# padding\n", count: 110_000)).write(toFile: big, atomically: true, encoding: .utf8)
        for (arguments, path) in [(["check", "/dev/zero"], "/dev/zero"), (["check", "--config", big], big),
                                  (["serve", "--config", "/dev/zero"], "/dev/zero"), (["serve", "--config", big], big)] {
            let result = try ServerBinary.run(arguments, timeout: 20)
            // A config error: check exits 1, serve 78 (EX_CONFIG, which systemd does not restart).
            #expect(result.status == (arguments[0] == "check" ? 1 : 78), "\(arguments): \(result.stderrText)")
            #expect(result.stderrText.contains("\(path): error: the configuration file is larger than 1048576 bytes"),
                    "\(arguments): \(result.stderrText)")
        }
        // The same routes in a small file pass.
        let small = big + ".small.yaml"
        try route.write(toFile: small, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: small) }
        #expect(try ServerBinary.run(["check", small]).status == 0)
    }
}
