import Foundation
import TestSupport
import Testing

/// Mocks' configuration errors through `serializerd check`, and map_dir against a file
/// swapped for a symlink while it is served. How mocks answer is tested in process
/// (ProxyTests: RouteAnswerTests).
@Suite(.timeLimit(.minutes(5)))
struct MockTests {
    static func directory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("mocks-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path + "/fixtures/deep", withIntermediateDirectories: true)
        return path
    }

    @Test func aMissingMockFileIsAConfigErrorNamingIt() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let config = dir + "/serializerd.yaml"
        try """
            listen: 127.0.0.1:0
            routes:
              - name: api
                match: { prefix: /api/ }
                upstream: http://127.0.0.1:9/
                mocks:
                  - when: { path: "x" }
                    respond: { file: mocks/gone.json }
                  - map_dir: nowhere/
            """.write(toFile: config, atomically: true, encoding: .utf8)
        let check = try ServerBinary.run(["check", "--config", config])
        #expect(check.status == 1)
        #expect(check.stderrText.contains("\(dir)/mocks/gone.json") && check.stderrText.contains("does not exist"))
        #expect(check.stderrText.contains("map_dir '\(dir)/nowhere/' is not a directory"))
    }

    /// A writable fixtures folder whose file is swapped, by atomic renames, between a plain
    /// file and a symlink to a secret outside it, for 5 s while it is fetched: the secret
    /// never comes out (a check of the path followed by an open by name leaked it within
    /// a second).
    @Test func aFileSwappedForASymlinkNeverLeaksWhatItPointsTo() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try #"{"secret":"TOPSECRET"}"#.write(toFile: dir + "/secret.json", atomically: true, encoding: .utf8)
        try #"{"fixture":true}"#.write(toFile: dir + "/fixtures/x.json", atomically: true, encoding: .utf8)
        let config = dir + "/serializerd.yaml"
        try """
            listen: 127.0.0.1:0
            workers: 2
            routes:
              - name: api
                match: { prefix: /api/ }
                upstream: http://127.0.0.1:9/
                mocks:
                  - map_dir: fixtures/

            """.write(toFile: config, atomically: true, encoding: .utf8)
        let (daemon, port) = try DaemonUnderTest.start(arguments: ["serve", "--config", config])
        defer { daemon.stop() }
        let stop = Locked(false)
        let swaps = Locked(0)
        let renamer = Thread {
            let fixtures = dir + "/fixtures"
            let deadline = Date().addingTimeInterval(5)
            while Date() < deadline && !stop.current {
                unlink(fixtures + "/.link")
                symlink("../secret.json", fixtures + "/.link")
                rename(fixtures + "/.link", fixtures + "/x.json")
                FileManager.default.createFile(atPath: fixtures + "/.file", contents: Data(#"{"fixture":true}"#.utf8))
                rename(fixtures + "/.file", fixtures + "/x.json")
                swaps.update { $0 += 1 }
            }
            stop.update { $0 = true }
        }
        renamer.start()
        var served = 0, refused = 0, leaks = 0, other: [String] = []
        let deadline = Date().addingTimeInterval(20)
        while !stop.current && Date() < deadline && served + refused < 200_000 {
            let reply = try RawHTTP.request(port: port, target: "/api/x.json")
            if reply.text.contains("TOPSECRET") { leaks += 1 }
            switch reply.status {
            case 200: served += 1
            case 400: refused += 1
            default: other.append("\(reply.status) \(reply.text)")
            }
        }
        stop.update { $0 = true }
        #expect(leaks == 0)
        #expect(other.isEmpty, "\(other.prefix(3))")
        // Both sides of the swap were met.
        #expect(served > 0 && refused > 0, "served \(served), refused \(refused), swaps \(swaps.current)")
    }
}
