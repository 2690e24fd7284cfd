// libFuzzer target for map_dir (Sources/Tapes/MapDirectory.swift), built by fuzz/run.sh.
// The directory holds every kind of link a writable fixtures folder can be given: relative
// links inside it, an absolute link, links out of it (to a file, to a directory, up two
// levels), a link through a linked directory, and a FIFO. Oracle: whatever the path's
// spelling (percent escapes, dots, slashes, NULs), a file served is one of the two inside
// it; the secret beside the directory never comes out; nothing blocks (a FIFO opened for
// reading would: -timeout catches it).
import Foundation
import HTTPCore

let base = NSTemporaryDirectory() + "fuzz-mapdir-\(getpid())"
let root: String = {
    let fm = FileManager.default
    try? fm.createDirectory(atPath: base + "/root/sub/deeper", withIntermediateDirectories: true)
    try? fm.createDirectory(atPath: base + "/outside", withIntermediateDirectories: true)
    _ = fm.createFile(atPath: base + "/root/a.json", contents: Data("{}".utf8))
    _ = fm.createFile(atPath: base + "/root/sub/b.xml", contents: Data("<b/>".utf8))
    _ = fm.createFile(atPath: base + "/secret.json", contents: Data("SECRET".utf8))
    _ = fm.createFile(atPath: base + "/outside/c.json", contents: Data("SECRET".utf8))
    let links: [(String, String)] = [
        ("in_link", "a.json"), ("sub/up_in", "../a.json"), ("dirlink", "sub"), ("abs_in", base + "/root/a.json"),
        ("out_file", "../secret.json"), ("out_dir", "../outside"), ("abs_out", base + "/secret.json"),
        ("sub/up", "../.."), ("sub/deeper/upup", "../../../secret.json"), ("loop", "loop"), ("tmp", NSTemporaryDirectory()),
    ]
    for (at, to) in links { try? fm.createSymbolicLink(atPath: base + "/root/" + at, withDestinationPath: to) }
    mkfifo(base + "/root/fifo.json", 0o600)
    atexit { try? FileManager.default.removeItem(atPath: NSTemporaryDirectory() + "fuzz-mapdir-\(getpid())") }
    return URL(fileURLWithPath: base + "/root").resolvingSymlinksInPath().path
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let path = String(decoding: UnsafeBufferPointer(start: data, count: min(size, 512)), as: UTF8.self)
    switch MapDirectory.file(root: root, path: path, maxBytes: 1 << 20) {
    case .found(let body, _):
        precondition(body == Array("{}".utf8) || body == Array("<b/>".utf8), "map_dir served a file outside its directory for \(path)")
    case .escapes, .missing:
        break
    }
    return 0
}
