import Foundation

/// Files under `Tests/Fixtures/`, found from this source file's location.
public enum Fixture {
    public static let directory: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures")

    public static func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: directory.appendingPathComponent(name)))
    }

    public static func path(_ name: String) -> String {
        directory.appendingPathComponent(name).path
    }
}
