// libFuzzer target for the cache's field parsers (Sources/Cache, HTTPDate.seconds), built
// by fuzz/run.sh. Oracles: Cache-Control read by a plain reference (split at commas
// outside quotes, then at the first `=`) gives the same directives; splitting a field
// into two lines at a comma changes nothing; dates that read back render as what was read;
// an If-None-Match list built from the input matches exactly the tags it holds; a
// public-key pin is valid exactly when a plain base64 reading says so.
import HTTPCore

/// The reference: RFC 9111 §5.2's grammar, written the obvious way.
func reference(_ line: String) -> CacheControl {
    var out = CacheControl()
    var directives: [String] = [], current = "", quoted = false, escaped = false
    for ch in line {
        if escaped { current.append(ch); escaped = false; continue }
        if quoted && ch == "\\" { current.append(ch); escaped = true; continue }
        if ch == "\"" { quoted.toggle() }
        if ch == "," && !quoted { directives.append(current); current = ""; continue }
        current.append(ch)
    }
    directives.append(current)
    func seconds(_ v: String?) -> CacheControl.Seconds {
        guard let v, !v.isEmpty, v.allSatisfy({ $0.isASCII && $0.isNumber }) else { return .invalid }
        var n = 0
        for c in v.utf8 { n = min(n * 10 + Int(c - 48), CacheControl.maxSeconds) }
        return .value(n)
    }
    func merge(_ slot: inout CacheControl.Seconds, _ value: CacheControl.Seconds) {
        if slot == .absent { slot = value } else if slot != value { slot = .invalid }
    }
    for d in directives {
        let trimmed = d.trimmingCharacters(in: " \t")
        let tchar = Set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
        let name = String(trimmed.prefix { tchar.contains($0) }).lowercased()
        var rest = trimmed.dropFirst(name.count).drop { $0 == " " || $0 == "\t" }
        var value: String?
        if rest.first == "=" {
            rest = rest.dropFirst().drop { $0 == " " || $0 == "\t" }
            if rest.first == "\"" {
                var v = "", k = rest.dropFirst()
                while let c = k.first, c != "\"" {
                    if c == "\\", k.count > 1 { k = k.dropFirst() }
                    v.append(k.first!); k = k.dropFirst()
                }
                value = v
            } else {
                value = String(rest.prefix { tchar.contains($0) })
            }
        }
        switch name {
        case "max-age": merge(&out.maxAge, seconds(value))
        case "s-maxage": merge(&out.sMaxAge, seconds(value))
        case "no-store": out.noStore = true
        case "private": out.isPrivate = true
        case "public": out.isPublic = true
        case "no-cache": out.noCache = true
        default: break
        }
    }
    return out
}

extension String {
    func trimmingCharacters(in set: String) -> Substring {
        var s = self[...]
        while let f = s.first, set.contains(f) { s = s.dropFirst() }
        while let l = s.last, set.contains(l) { s = s.dropLast() }
        return s
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    // Field values are bytes without CR, LF or NUL (the HTTP parser refuses those); ASCII
    // keeps the reference's Character view aligned with the parser's bytes.
    guard bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F || $0 == 0x09 }) else { return 0 }
    let line = String(decoding: bytes, as: UTF8.self)
    let parsed = CacheControl([line])
    let expected = reference(line)
    precondition(parsed.maxAge == expected.maxAge && parsed.sMaxAge == expected.sMaxAge && parsed.noStore == expected.noStore
                 && parsed.isPrivate == expected.isPrivate && parsed.isPublic == expected.isPublic && parsed.noCache == expected.noCache,
                 "Cache-Control differs from the reference on \(line): \(parsed) vs \(expected)")
    if let comma = line.firstIndex(of: ","), !line[..<comma].contains("\"") {
        precondition(CacheControl([String(line[..<comma]), String(line[line.index(after: comma)...])]) == parsed,
                     "splitting at a comma changed \(line)")
    }
    if let seconds = HTTPDate.seconds(line, now: 1_800_000_000) {
        precondition(seconds.isFinite, "a date that is not finite")
        if HTTPDate.isValid(line), let day = Int(line.dropFirst(5).prefix(2)), day <= 28 {
            let rendered = UTCTimestamp.format(unixSeconds: seconds, fraction: .milliseconds)
            precondition(rendered.dropFirst(8).prefix(2) == line.dropFirst(5).prefix(2), "\(line) read as \(rendered)")
        }
    }
    _ = Freshness(status: 200, fields: [("Cache-Control", line), ("Expires", line), ("Date", line), ("Age", line), ("Last-Modified", line)],
                  requestedAt: 0, receivedAt: 1, wallNow: 1_800_000_000)
    _ = Storability.of(method: "GET", status: 200, requestFields: [("Authorization", line)], responseFields: [("Vary", line), ("Cache-Control", line)])
    // If-None-Match: a list of quoted tags made from the input matches exactly the tags
    // it holds; the raw input only must not crash.
    let pieces = line.split(separator: ",", omittingEmptySubsequences: false).map { $0.filter { $0 != "\"" } }
    let list = pieces.map { "\"\($0)\"" }.joined(separator: ", ")
    for want in ["abc", pieces.last ?? ""] {
        precondition(OutputTag.ifNoneMatch(list, matches: "\"\(want)\"") == pieces.contains { $0 == want }, "If-None-Match \(list) for \(want)")
    }
    _ = OutputTag.ifNoneMatch(line, matches: "\"abc\"")
    precondition(OutputTag.of(bytes) == OutputTag.of(Array(line.utf8)), "the tag of equal bytes differs")
    // A public-key pin: valid exactly when the text after sha256// is the canonical base64
    // of 32 bytes (decoded and encoded again, it is unchanged).
    for candidate in [line, "sha256//" + line] {
        precondition(PublicKeyPin.isValid(candidate) == referencePin(candidate), "pin \(candidate)")
    }
    return 0
}

let base64 = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")

func referencePin(_ text: String) -> Bool {
    guard text.hasPrefix("sha256//") else { return false }
    let encoded = Array(text.dropFirst(8))
    guard encoded.count % 4 == 0, !encoded.isEmpty else { return false }
    var bits: [Bool] = []
    var padding = 0
    for (index, ch) in encoded.enumerated() {
        if ch == "=" {
            guard index >= encoded.count - 2 else { return false }
            padding += 1
            continue
        }
        guard padding == 0, let value = base64.firstIndex(of: ch) else { return false }
        for shift in (0..<6).reversed() { bits.append(value >> shift & 1 == 1) }
    }
    let count = bits.count / 8
    guard count == 32 else { return false }
    var bytes: [UInt8] = []
    for k in 0..<count { bytes.append(bits[(k * 8)..<(k * 8 + 8)].reduce(0) { $0 << 1 | ($1 ? 1 : 0) }) }
    // Canonical: encoding the bytes again gives the same text.
    var again: [Character] = []
    var bitsAgain: [Bool] = bytes.flatMap { byte in (0..<8).reversed().map { byte >> $0 & 1 == 1 } }
    while bitsAgain.count % 6 != 0 { bitsAgain.append(false) }
    for k in stride(from: 0, to: bitsAgain.count, by: 6) { again.append(base64[bitsAgain[k..<(k + 6)].reduce(0) { $0 << 1 | ($1 ? 1 : 0) }]) }
    while again.count % 4 != 0 { again.append("=") }
    return again == encoded
}
