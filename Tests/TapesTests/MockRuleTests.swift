@testable import Tapes
import Testing

@Suite struct MockRuleTests {
    @Test(arguments: [
        ("refunds/*", "refunds/7", true), ("refunds/*", "refunds/7/items", false), ("refunds/*", "refunds/", true),
        ("**", "a/b/c", true), ("a/**/z", "a/b/c/z", true), ("a/**/z", "a/z", false), ("*.json", "x.json", true),
        ("*.json", "d/x.json", false), ("**.json", "d/x.json", true), ("exact", "exact", true), ("exact", "exactly", false),
        ("*/*", "a/b", true), ("", "", true), ("", "a", false),
    ])
    func globs(pattern: String, path: String, matches: Bool) {
        #expect(Glob.matches(Array(pattern.utf8)[...], Array(path.utf8)[...]) == matches)
    }

    /// Many stars against a long path: one pass a pattern step, not a backtracking search.
    @Test func manyStarsStayLinear() {
        let pattern = Array(String(repeating: "**a*", count: 40).utf8) + Array("b".utf8)
        let path = [UInt8](repeating: UInt8(ascii: "a"), count: 8000)
        #expect(!Glob.matches(pattern[...], path[...]))
        #expect(Glob.matches(pattern[...], (path + [UInt8(ascii: "b")])[...]))
    }

    @Test func contentTypesComeFromTheExtension() {
        #expect(MapDirectory.contentType("/d/a.JSON") == "application/json")
        #expect(MapDirectory.contentType("/d/a.plist") == "application/x-plist")
        #expect(MapDirectory.contentType("/d/a.tar.gz") == "application/octet-stream")
        #expect(MapDirectory.contentType("/d.dir/noext") == "application/octet-stream")
        #expect(MapDirectory.contentType("/d/p.jpeg") == "image/jpeg")
    }
}
