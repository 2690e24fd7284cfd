// libFuzzer target for mock matching (Sources/Tapes/Mocks.swift, Glob.swift, MapDirectory.swift), built by fuzz/run.sh.
// Oracles: the linear glob agrees with a plain backtracking matcher (memoized, on short
// inputs) on every pattern and path; map_dir never serves a file outside its directory,
// whatever the path's escapes, dots or symlinks.
import Foundation
import HTTPCore

/// The rules as written (DESIGN §2): `**` any run, `*` any run without `/`, else itself.
func reference(_ p: [UInt8], _ t: [UInt8]) -> Bool {
    var memo: [Int: Bool] = [:]
    func go(_ i: Int, _ j: Int) -> Bool {
        let key = i * (t.count + 1) + j
        if let known = memo[key] { return known }
        let result: Bool
        if i == p.count {
            result = j == t.count
        } else if p[i] == UInt8(ascii: "*") {
            let double = i + 1 < p.count && p[i + 1] == UInt8(ascii: "*")
            let rest = double ? i + 2 : i + 1
            var found = go(rest, j), k = j
            while !found && k < t.count && (double || t[k] != UInt8(ascii: "/")) { k += 1; found = go(rest, k) }
            result = found
        } else {
            result = j < t.count && t[j] == p[i] && go(i + 1, j + 1)
        }
        memo[key] = result
        return result
    }
    return go(0, 0)
}

// A map_dir root with a file, a subdirectory, and symlinks leading out.
let root: String = {
    let dir = NSTemporaryDirectory() + "fuzz-mapdir-\(getpid())"
    try? FileManager.default.createDirectory(atPath: dir + "/sub", withIntermediateDirectories: true)
    FileManager.default.createFile(atPath: dir + "/a.json", contents: Data("{}".utf8))
    FileManager.default.createFile(atPath: dir + "/sub/b.xml", contents: Data("<b/>".utf8))
    FileManager.default.createFile(atPath: NSTemporaryDirectory() + "fuzz-mapdir-secret-\(getpid())", contents: Data("SECRET".utf8))
    try? FileManager.default.createSymbolicLink(atPath: dir + "/out", withDestinationPath: NSTemporaryDirectory())
    try? FileManager.default.createSymbolicLink(atPath: dir + "/sub/up", withDestinationPath: "../..")
    atexit {
        try? FileManager.default.removeItem(atPath: NSTemporaryDirectory() + "fuzz-mapdir-\(getpid())")
        try? FileManager.default.removeItem(atPath: NSTemporaryDirectory() + "fuzz-mapdir-secret-\(getpid())")
    }
    return URL(fileURLWithPath: dir).resolvingSymlinksInPath().path
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let first = bytes.first else { return 0 }
    let rest = Array(bytes.dropFirst())
    let split = min(Int(first) % 16, rest.count)
    let pattern = Array(rest[..<split]), text = Array(rest[split...].prefix(40))
    precondition(Glob.matches(pattern[...], text[...]) == reference(pattern, text),
                 "glob disagrees: \(String(decoding: pattern, as: UTF8.self)) on \(String(decoding: text, as: UTF8.self))")
    let path = String(decoding: rest, as: UTF8.self)
    if case .found(let body, _) = MapDirectory.file(root: root, path: path, maxBytes: 1 << 20) {
        precondition(body == Array("{}".utf8) || body == Array("<b/>".utf8), "map_dir served a file outside its directory for \(path)")
    }
    return 0
}
