import HTTPCore
// fuzz/har compiles these files into one module with the ones they use.
#if canImport(Serializers)
import Serializers
#endif
#if canImport(Telemetry)
import Telemetry
#endif

/// A growing output buffer for one entry's JSON. Its own storage rather than an array's
/// (a string is escaped straight into room reserved for its worst case, and no closure
/// captures the buffer, which would cost an exclusivity check per write).
struct HARWriter: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private var count = 0

    init(capacity: Int) {
        self.capacity = max(capacity, 256)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    @inline(__always)
    mutating func reserve(_ more: Int) {
        if count &+ more > capacity { grow(more) }
    }

    mutating func grow(_ more: Int) {
        let grown = max(capacity * 2, count + more)
        let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
        moved.update(from: base, count: count)
        base.deallocate()
        base = moved
        capacity = grown
    }

    mutating func raw(_ text: StaticString) {
        reserve(text.utf8CodeUnitCount)
        (base + count).update(from: text.utf8Start, count: text.utf8CodeUnitCount)
        count += text.utf8CodeUnitCount
    }

    mutating func bytes(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let p = bytes.baseAddress else { return }
        reserve(bytes.count)
        (base + count).update(from: p, count: bytes.count)
        count += bytes.count
    }

    /// `"…"` for valid UTF-8.
    mutating func quoted(_ bytes: UnsafeBufferPointer<UInt8>) {
        reserve(JSONEscaping.wideRoom(bytes.count))
        count += JSONEscaping.writeQuotedWide(bytes, to: base + count)
    }

    mutating func string(_ text: String) {
        // Native strings are contiguous: borrowed, not copied.
        if text.utf8.withContiguousStorageIfAvailable({ quoted($0) }) != nil { return }
        var copy = text
        copy.withUTF8 { quoted($0) }
    }

    /// HAR's startedDateTime, quoted.
    mutating func timestamp(_ unixSeconds: Double) {
        reserve(26)
        base[count] = UInt8(ascii: "\"")
        guard let n = UTCTimestamp.putMilliseconds(unixSeconds: unixSeconds, into: base + count + 1) else {
            return string(UTCTimestamp.format(unixSeconds: unixSeconds, fraction: .milliseconds))
        }
        base[count + 1 + n] = UInt8(ascii: "\"")
        count += n + 2
    }

    mutating func milliseconds(_ seconds: Double) {
        reserve(NumberText.maxMillisecondsLength)
        var w = 0
        NumberText.putMilliseconds(seconds, into: UnsafeMutableBufferPointer(start: base + count, count: NumberText.maxMillisecondsLength), at: &w)
        count += w
    }

    mutating func int(_ value: Int) {
        reserve(20)
        var v = value.magnitude, digits = 0
        repeat { digits += 1; v /= 10 } while v > 0
        if value < 0 { base[count] = UInt8(ascii: "-"); count += 1 }
        v = value.magnitude
        for k in stride(from: digits - 1, through: 0, by: -1) {
            base[count + k] = UInt8(ascii: "0") + UInt8(v % 10)
            v /= 10
        }
        count += digits
    }

    /// The fields as HAR's name/value list, values `capture` names redacted; the first
    /// Content-Type's value.
    @discardableResult
    mutating func fields(_ fields: HARCodec.Fields, capture: Redaction?) -> String? {
        raw("[")
        var first = true, contentType: String?
        fields { name, value in
            raw(first ? "{\"name\":" : ",{\"name\":")
            first = false
            quoted(name)
            raw(",\"value\":")
            if let capture, capture.isRedactedHeader(name) {
                string(Redaction.marker)
            } else {
                quoted(value)
            }
            raw("}")
            if contentType == nil, name.count == 12, HARWriter.isContentType(name) { contentType = String(decoding: value, as: UTF8.self) }
        }
        raw("]")
        return contentType
    }

    static func isContentType(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        var k = 0
        for c in "content-type".utf8 {
            let b = name[k]
            if (b &- 0x41 < 26 ? b | 0x20 : b) != c { return false }
            k += 1
        }
        return true
    }

    /// `"text":…` and, for bytes that are not UTF-8, base64 and the encoding member.
    mutating func text(_ body: [UInt8], encodingKey: StaticString) {
        raw("\"text\":")
        if UTF8Text.isValid(body) {
            body.withUnsafeBufferPointer { quoted($0) }
        } else {
            raw("\"")
            Base64.encode(body).withUnsafeBufferPointer { bytes($0) }
            raw("\",\"")
            raw(encodingKey)
            raw("\":\"base64\"")
        }
    }

    consuming func finish() -> [UInt8] {
        // One memcpy (the generic collection copy goes a byte at a time).
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            buffer.baseAddress!.update(from: base, count: count)
            initialized = count
        }
    }
}
