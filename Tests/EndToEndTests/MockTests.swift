import Foundation
import TestSupport
import Testing

/// Mocks' configuration errors through `serializerd check`. How mocks answer is tested in
/// process (ProxyTests: RouteAnswerTests).
@Suite(.timeLimit(.minutes(3)))
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
}
