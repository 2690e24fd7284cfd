// libFuzzer target for the client-path checks (Sources/Proxy/Routing/UpstreamBase.swift)
// and Connection-header option lists (HeaderNames.addConnectionOptions), built by
// fuzz/run.sh. Oracles: a joined URL stays under its base with no dot or empty segment
// however often its escapes are decoded; a refused path has a reason a plain re-check
// confirms; every listed option is matched, case-insensitively.
import Foundation   // UpstreamBase uses String.range(of:), as the Proxy module sees it
import HTTPCore

let bases = [UpstreamBase("http://h/")!, UpstreamBase("https://h:8443/v1")!, UpstreamBase("http://[::1]:9/a/b/")!]

/// One round of percent-decoding, as an upstream server does it.
func decodedOnce(_ bytes: [UInt8]) -> [UInt8] {
    var out: [UInt8] = []
    var i = 0
    while i < bytes.count {
        if bytes[i] == UInt8(ascii: "%"), i + 2 < bytes.count, let high = Hex.value(bytes[i + 1]), let low = Hex.value(bytes[i + 2]) {
            out.append(high << 4 | low); i += 3
        } else {
            out.append(bytes[i]); i += 1
        }
    }
    return out
}

func trimmed(_ text: Substring) -> Substring {
    text.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed().reduce(into: Substring()) { $0.append($1) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size > 0 else { return 0 }
    let input = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let base = bases[Int(data[0]) % bases.count]
    let text = String(decoding: input, as: UTF8.self)
    let query = text.firstIndex(of: "?")
    let remainder = query.map { text[..<$0] } ?? text[...]
    switch base.join(remainder: remainder, query: query.map { String(text[text.index(after: $0)...]) }) {
    case .success(let url):
        // Bytes, not Characters: a combining mark after the base's "/" would merge with it.
        precondition(url.utf8.starts(with: base.description.utf8), "left the base: \(url)")
        let path = Array(remainder.utf8)
        precondition(!path.contains { $0 < 0x21 || $0 == 0x7F || $0 == UInt8(ascii: "\\") }, "raw control, space or backslash passed")
        let segments = path.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        for (k, segment) in segments.enumerated() {
            precondition(!(segment.isEmpty && k < segments.count - 1), "empty segment passed: \(text)")
            // What a server decoding once, or (wrongly) twice, would see.
            for decoded in [decodedOnce(Array(segment)), decodedOnce(decodedOnce(Array(segment)))] {
                precondition(decoded != [0x2E] && decoded != [0x2E, 0x2E], "dot segment passed: \(text)")
                precondition(!decoded.contains(UInt8(ascii: "/")) && !decoded.contains(UInt8(ascii: "\\")), "encoded separator passed: \(text)")
            }
        }
    case .failure:
        break
    }

    var named = HeaderNames([])
    input.withUnsafeBufferPointer { named.addConnectionOptions($0) }
    for token in text.split(separator: ",") {
        let name = String(trimmed(token))
        guard !name.isEmpty, !name.utf8.contains(where: { $0 >= 0x80 }) else { continue }
        precondition(named.contains(name.lowercased()) || ["keep-alive", "close"].contains(name.lowercased()), "option '\(name)' not matched")
        precondition(named.contains(name.uppercased()) || ["keep-alive", "close"].contains(name.lowercased()), "matching is not case-insensitive")
    }
    return 0
}
