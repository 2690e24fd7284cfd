import HTTPCore
import Serializers

/// The completion event's JSON object written straight into memory. With a page on
/// `/-/events` every event is rendered; appending field by field to an array cost about
/// 1 µs per event, this a fraction of it. The bytes are those `LogLine` writes for the
/// same fields (a test holds the two together).
extension CompletionEvent {
    /// The most bytes `writeJSON` writes: every string byte may become a 6-byte escape.
    var jsonBound: Int {
        var strings = requestID.utf8.count + route.utf8.count + method.utf8.count + path.utf8.count + outcome.utf8.count
        strings += (upstreamURL?.utf8.count ?? 0) + (contentType?.utf8.count ?? 0)
        strings += (serializer?.utf8.count ?? 0) + (error?.utf8.count ?? 0) + (source?.utf8.count ?? 0) + (cache?.utf8.count ?? 0) + (httpVersion?.utf8.count ?? 0)
        strings += faults?.utf8.count ?? 0
        return Self.fixedJSONBound + 6 * strings + (stream?.utf8.count ?? 0)
    }

    /// Names, punctuation, the timestamp, the level and the numbers: under 400 bytes.
    static let fixedJSONBound = 512

    /// Writes the object at `base`, which has `jsonBound` bytes of room; returns its length.
    func writeJSON(to base: UnsafeMutablePointer<UInt8>, clock: inout LogClock) -> Int {
        var w = RawJSONWriter(base)
        w.raw("{\"ts\":\"")
        w.p += clock.write(startedAt + duration, to: w.p)
        w.raw("\",\"level\":")
        w.string(level.rawValue)
        w.raw(",\"msg\":\"request_completed\",\"request_id\":")
        w.string(requestID)
        w.raw(",\"route\":")
        w.string(route)
        w.raw(",\"method\":")
        w.string(method)
        w.raw(",\"path\":")
        w.string(path)
        w.raw(",\"upstream_url\":")
        w.string(upstreamURL)
        w.raw(",\"status\":")
        w.int(status)
        w.raw(",\"upstream_status\":")
        w.int(upstreamStatus)
        w.raw(",\"content_type\":")
        w.string(contentType)
        w.raw(",\"serializer\":")
        w.string(serializer)
        w.raw(",\"outcome\":")
        w.string(outcome)
        w.raw(",\"bytes_in\":")
        w.int(bytesIn)
        w.raw(",\"bytes_out\":")
        w.int(bytesOut)
        w.raw(",\"duration_ms\":")
        w.milliseconds(duration)
        w.raw(",\"upstream_ms\":")
        w.milliseconds(upstreamDuration)
        w.raw(",\"serialize_ms\":")
        w.milliseconds(serializeDuration)
        w.raw(",\"unsafe_numbers\":")
        w.int(unsafeNumbers)
        w.raw(",\"source\":")
        w.string(source)
        w.raw(",\"cache\":")
        w.string(cache)
        w.raw(",\"http_version\":")
        w.string(httpVersion)
        w.raw(",\"faults\":")
        w.string(faults)
        w.raw(",\"error\":")
        w.string(error)
        if let contractViolations {
            w.raw(",\"contract_violations\":")
            w.int(contractViolations)
        }
        if let attempts {
            w.raw(",\"attempts\":")
            w.int(attempts)
        }
        if let queueDuration {
            w.raw(",\"queue_ms\":")
            w.milliseconds(queueDuration)
        }
        if var stream {
            w.raw(",\"stream\":")
            stream.withUTF8 { w.copy($0) }
        }
        w.raw("}")
        return w.p - base
    }
}

/// Unchecked writes into memory the caller sized.
struct RawJSONWriter {
    var p: UnsafeMutablePointer<UInt8>

    init(_ base: UnsafeMutablePointer<UInt8>) { p = base }

    @inline(__always)
    mutating func raw(_ text: StaticString) {
        let count = text.utf8CodeUnitCount
        UnsafeMutableRawPointer(p).copyMemory(from: text.utf8Start, byteCount: count)
        p += count
    }

    mutating func copy(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress else { return }
        p.update(from: source, count: bytes.count)
        p += bytes.count
    }

    mutating func null() { raw("null") }

    mutating func string(_ value: String?) {
        guard var value else { return null() }
        p += value.withUTF8 { JSONEscaping.writeQuoted($0, to: p) }
    }

    mutating func int(_ value: Int?) {
        guard let value else { return null() }
        if value < 0 { raw("-") }
        var digits = 1, rest = value.magnitude
        while rest >= 10 { rest /= 10; digits += 1 }
        rest = value.magnitude
        for k in stride(from: digits - 1, through: 0, by: -1) {
            p[k] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
        }
        p += digits
    }

    mutating func milliseconds(_ seconds: Double?) {
        guard let seconds else { return null() }
        var w = 0
        NumberText.putMilliseconds(seconds, into: UnsafeMutableBufferPointer(start: p, count: NumberText.maxMillisecondsLength), at: &w)
        p += w
    }
}
