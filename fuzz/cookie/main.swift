// libFuzzer target for a cookie jar's rules on connect-only handshakes
// (Sources/HTTPCore/JarCookie.swift): the Set-Cookie reader, libcurl's cookie-list lines
// and the Cookie field. Input: host LF request path LF Set-Cookie value. Oracles: what is
// kept has no control character and round-trips through libcurl's line form; a cookie is
// sent back to the host and path that set it while it lives; the Cookie field is one line.
import HTTPCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let parts = text.split(separator: "\n", maxSplits: 2, omittingEmptySubsequences: false)
    let host = parts.count > 0 ? String(parts[0]) : "", path = parts.count > 1 ? String(parts[1]) : "/"
    let header = parts.count > 2 ? String(parts[2]) : text
    let now = 1_800_000_000

    if let line = JarCookie(netscapeLine: text) {
        precondition(JarCookie(netscapeLine: line.netscapeLine) == line, "a cookie-list line does not round-trip")
    }
    guard let cookie = JarCookie(setCookie: header, host: host, requestPath: path, now: now) else { return 0 }
    for field in [cookie.name, cookie.value, cookie.path, cookie.domain] {
        precondition(!field.utf8.contains { $0 < 0x20 || $0 == 0x7F } || field == cookie.domain && cookie.domain == host.lowercased(),
                     "a kept cookie holds a control character")
    }
    precondition(!cookie.name.isEmpty && !cookie.name.contains(";") && !cookie.value.contains(";"), "a kept cookie is not one pair")
    precondition(cookie.path.hasPrefix("/"), "a kept cookie's path is not absolute")
    precondition(cookie.expires == 0 || cookie.expires == 1 || cookie.expires > now, "a kept cookie's expiry is in the past")
    // (Bytes, not Characters: a dot or a tab followed by a combining mark is one Character.)
    if !cookie.domain.utf8.contains(where: { $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) && !cookie.domain.isEmpty
        && cookie.domain.utf8.first != 0x2E {
        precondition(JarCookie(netscapeLine: cookie.netscapeLine) == cookie, "a kept cookie does not round-trip through libcurl's line")
    }
    let alive = cookie.expires != 1
    precondition(cookie.matches(host: host, path: cookie.path, secure: true, now: now) == alive,
                 "a cookie is not sent back to the host and path that set it")
    if let sent = JarCookie.header([cookie, cookie], host: host, path: cookie.path, secure: true, now: now) {
        precondition(!sent.contains("\r") && !sent.contains("\n"), "the Cookie field is more than one line")
    }
    return 0
}
