import HTTPCore

// libFuzzer target for the HTTP/1.1 request parser (Sources/EventLoop/HTTP1), built by
// fuzz/run.sh with `swiftc -sanitize=fuzzer,address`. Besides memory safety it checks
// that the parser's result does not depend on how the bytes are split into reads: the
// whole input at once and the input one byte at a time must agree exactly, and the
// fields the full HAR reads back from a head's bytes are the ones the parser gave.

struct Outcome: Equatable {
    var heads: [String] = []
    var bodies: [[UInt8]] = []
    var ends = 0
    var error: HTTPParseError?
}

func run(_ input: UnsafeBufferPointer<UInt8>, piece: Int) -> Outcome {
    var parser = RequestParser(limits: .init(maxHeadBytes: 2048, maxBodyBytes: 4096))
    var outcome = Outcome()
    var buffer: [UInt8] = []
    var offered = 0
    var totalBody = 0
    while true {
        if offered < input.count {
            let next = min(input.count, offered + piece)
            buffer += input[offered..<next]
            offered = next
        }
        while true {
            let step: (consumed: Int, event: RequestParser.Event?)
            do throws(HTTPParseError) {
                step = try buffer.withUnsafeBufferPointer { b throws(HTTPParseError) in try parser.next(b) }
            } catch {
                outcome.error = error
                return outcome
            }
            precondition(step.consumed >= 0 && step.consumed <= buffer.count, "consumed past the input")
            switch step.event {
            case .head(let head)?:
                outcome.heads.append(head.method + " " + head.target)
                // The full HAR reads the fields back from the head's bytes: as the parser saw them.
                var parsed: [(String, String)] = []
                head.fields.forEach { name, value in
                    parsed.append((String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self)))
                }
                let captured = CapturedExchange(target: head.target, head: head.bytes, requestBody: [], responseHeaders: HeaderFields(),
                                                responseBody: [], upstream: nil).requestFields
                precondition(captured.elementsEqual(parsed.filter { $0.0.lowercased() != "host" }, by: ==),
                             "the captured fields differ from the parser's: \(captured) vs \(parsed)")
                outcome.bodies.append([])
            case .body(let range)?:
                precondition(range.upperBound <= step.consumed && !range.isEmpty, "a body range outside what was consumed")
                outcome.bodies[outcome.bodies.count - 1] += buffer[range]
                totalBody += range.count
            case .end?:
                outcome.ends += 1
            case nil:
                break
            }
            buffer.removeFirst(step.consumed)
            if step.consumed == 0 && step.event == nil { break }
        }
        if offered >= input.count { break }
    }
    precondition(outcome.bodies.allSatisfy { $0.count <= 4096 }, "a body past the limit")
    return outcome
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let input = UnsafeBufferPointer(start: data, count: size)
    let whole = run(input, piece: Int.max)
    let bytewise = run(input, piece: 1)
    // An error may be found earlier with more input in hand only as the same kind at the same request.
    precondition(whole == bytewise, "the outcome depends on how the input was split: \(whole) vs \(bytewise)")
    // The Host check against a reference written from RFC 3986's grammar another way.
    let host = HostField.split(input)
    precondition((host != nil) == referenceHostIsValid(Array(input)), "HostField disagrees with the grammar on \(Array(input))")
    if let (hostEnd, portStart) = host {
        precondition(hostEnd <= input.count && (portStart.map { $0 == hostEnd + 1 } ?? (hostEnd == input.count)), "split points")
    }
    // The route Host rule (DNS rebinding): a name accepted must be one the rule names,
    // read from the normalized name as Strings rather than byte by byte.
    if host != nil {
        precondition(HostField.isLocalOrLiteral(validated: input) == HostField.isLocalOrLiteral(input),
                     "the validated-value Host rule disagrees on \(Array(input))")
    }
    let value = String(decoding: input, as: UTF8.self)
    if input.elementsEqual(value.utf8) {
        precondition(HostField.isLocalOrLiteral(input) == referenceNamesThisMachine(value),
                     "the Host rule disagrees with its reference on \(Array(input))")
    }
    return 0
}

/// IP literals (IPv6 in brackets, or digits and dots only), `localhost` and names under it.
func referenceNamesThisMachine(_ value: String) -> Bool {
    guard let name = HostField.name(value), !name.isEmpty else { return false }
    if value.hasPrefix("[") { return name.contains(":") }
    if name.allSatisfy({ $0 == "." || ("0"..."9").contains($0) }) { return true }
    return name == "localhost" || name.hasSuffix(".localhost")
}

/// uri-host [ ":" port ], port 0-65535 in at most five digits, from the grammar's pieces.
func referenceHostIsValid(_ v: [UInt8]) -> Bool {
    // ASCII only, checked as bytes: Character comparison is canonical, so a non-ASCII
    // character equivalent to an allowed one (U+037E is ";") would pass the set below.
    guard v.allSatisfy({ $0 < 0x80 }) else { return false }
    let text = String(decoding: v, as: UTF8.self)
    var host = Substring(text), port: Substring?
    if text.hasPrefix("[") {
        guard let close = text.firstIndex(of: "]") else { return false }
        host = text[...close]
        let rest = text[text.index(after: close)...]
        if !rest.isEmpty {
            guard rest.first == ":" else { return false }
            port = rest.dropFirst()
        }
        let inside = host.dropFirst().dropLast()
        guard !inside.isEmpty, inside.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else { return false }
    } else {
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        host = parts[0]
        if parts.count == 2 { port = parts[1] }
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=")
        var chars = Array(host)
        while let k = chars.firstIndex(of: "%") {
            guard k + 2 < chars.count, chars[k + 1].isHexDigit, chars[k + 2].isHexDigit else { return false }
            chars.removeSubrange(k...(k + 2))
        }
        guard chars.allSatisfy(allowed.contains) else { return false }
    }
    if let port {
        guard port.count <= 5, port.allSatisfy({ $0.isASCII && $0.isNumber }) else { return false }
        if !port.isEmpty, Int(port)! > 65535 { return false }
    }
    return true
}
