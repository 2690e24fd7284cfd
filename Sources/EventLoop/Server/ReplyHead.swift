import HTTPCore
#if canImport(Glibc)
import Glibc
#endif

/// A response's status line and header fields, written as bytes into memory of its own:
/// each field is two copies and a few stores, where an Array paid a uniqueness and
/// capacity check per piece. `take(appending:)` hands the head and the body over as one
/// buffer (what a coalesced reply sends).
struct ReplyHead: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private(set) var count = 0

    init(status: Int, capacity: Int) {
        self.capacity = max(capacity, 64)
        base = .allocate(capacity: self.capacity)
        write("HTTP/1.1 ")
        appendDecimal(status)
        write(0x20)
        var reason = HTTPReason.phrase(status)
        reason.withUTF8 { reserve($0.count); put($0) }
        write(0x0D, 0x0A)
    }

    deinit { base.deallocate() }

    /// The head's bytes, copied out.
    var bytes: [UInt8] { Array(UnsafeBufferPointer(start: base, count: count)) }

    /// The head with `body` after it, in one buffer.
    consuming func take(appending body: [UInt8]) -> [UInt8] {
        let head = count
        return [UInt8](unsafeUninitializedCapacity: head + body.count) { out, initialized in
            out.baseAddress!.update(from: base, count: head)
            body.withUnsafeBufferPointer { if let b = $0.baseAddress { (out.baseAddress! + head).update(from: b, count: $0.count) } }
            initialized = head + body.count
        }
    }

    /// One field. CR, LF and NUL never reach the wire: a value carrying them (from an
    /// upstream, say) would split the response, so they become spaces.
    mutating func add(_ name: String, _ value: String) {
        var name = name, value = value
        name.withUTF8 { name in value.withUTF8 { value in add(name: name, value: value) } }
    }

    mutating func add(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {
        reserve(name.count + value.count + 4)
        put(name)
        base[count] = 0x3A
        base[count + 1] = 0x20
        count += 2
        let start = count
        put(value)
        // Rare: only then is the value walked a second time.
        if Self.hasControl(value) {
            for k in start..<count where base[k] == 0x0D || base[k] == 0x0A || base[k] == 0 { base[k] = 0x20 }
        }
        base[count] = 0x0D
        base[count + 1] = 0x0A
        count += 2
    }

    /// Copies `fields` whole, as one block, when that writes what `add` would for each:
    /// every line `name: value` ended by CRLF, no other byte below 0x20 anywhere, no
    /// `Connection` line and at most one `Date`, a valid one (the writer reads those).
    /// Returns whether a Date was among them; nil, having written nothing, otherwise (the
    /// caller then adds field by field). The replies serializerd builds pass; the check
    /// costs a pass over the bytes, eight at a time, and a colon search a line.
    mutating func addVerbatim(_ fields: HeaderFields) -> Bool? {
        let dated = fields.bytes.withUnsafeBufferPointer { all -> Bool? in
            guard let start = all.baseAddress, !all.isEmpty else { return false }
            guard all.count >= 2, all[all.count - 2] == 0x0D, all[all.count - 1] == 0x0A else { return nil }
            let raw = UnsafeRawPointer(start)
            var line = 0, k = 0, dated = false
            while k < all.count {
                if k + 8 <= all.count {
                    // The lowest flagged byte is a true one (a borrow only runs upward; little-endian,
                    // so the lowest is the first in memory).
                    let word = raw.loadUnaligned(fromByteOffset: k, as: UInt64.self)
                    let flagged = (word &- 0x2020_2020_2020_2020) & ~word & 0x8080_8080_8080_8080
                    if flagged == 0 {
                        k += 8
                        continue
                    }
                    k += flagged.trailingZeroBitCount / 8
                } else if all[k] >= 0x20 {
                    k += 1
                    continue
                }
                // A control byte: only the CR of a line's CRLF may be one.
                guard all[k] == 0x0D, k + 1 < all.count, all[k + 1] == 0x0A else { return nil }
                switch Self.kind(of: UnsafeBufferPointer(rebasing: all[line..<k])) {
                case .plain: break
                case .date(let value) where !dated && HTTPDate.isValid(String(decoding: value, as: UTF8.self)): dated = true
                default: return nil
                }
                k += 2
                line = k
            }
            return dated
        }
        guard let dated else { return nil }
        fields.bytes.withUnsafeBufferPointer { all in
            reserve(all.count)
            put(all)
        }
        return dated
    }

    private enum LineKind { case plain, date(UnsafeBufferPointer<UInt8>), other }

    /// A `name: value` line with a name: a Date (its value), another field but Connection, or not one to copy.
    private static func kind(of line: UnsafeBufferPointer<UInt8>) -> LineKind {
        guard let base = line.baseAddress, line.count > 0, let colon = memchr(base, 0x3A, line.count) else { return .other }
        let nameCount = UnsafeRawPointer(colon) - UnsafeRawPointer(base)
        guard nameCount > 0 else { return .other }
        let name = UnsafeBufferPointer(start: base, count: nameCount)
        if HeaderNames.isConnection(name) { return .other }
        guard nameCount == 4, ByteClass.equalsIgnoringCase(name, "date") else { return .plain }
        return .date(HeaderFields.trimmed(UnsafeBufferPointer(rebasing: line[(nameCount + 1)...])))
    }

    /// Whether any byte is below 0x20, eight at a time: a byte under 0x20 is the one
    /// whose subtraction borrows into its high bit while its own high bit is clear.
    static func hasControl(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = UnsafeRawPointer(bytes.baseAddress) else { return false }
        var k = 0
        while k + 8 <= bytes.count {
            let word = base.loadUnaligned(fromByteOffset: k, as: UInt64.self)
            if (word &- 0x2020_2020_2020_2020) & ~word & 0x8080_8080_8080_8080 != 0 { return true }
            k += 8
        }
        while k < bytes.count {
            if bytes[k] < 0x20 { return true }
            k += 1
        }
        return false
    }

    mutating func addContentLength(_ length: Int) {
        write("Content-Length: ")
        appendDecimal(length)
        write(0x0D, 0x0A)
    }

    mutating func end() { write(0x0D, 0x0A) }

    private mutating func reserve(_ extra: Int) {
        guard count + extra > capacity else { return }
        let grown = max(2 * capacity, count + extra)
        let larger = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
        larger.update(from: base, count: count)
        base.deallocate()
        base = larger
        capacity = grown
    }

    /// Copies `bytes` in; room reserved by the caller.
    private mutating func put(_ bytes: UnsafeBufferPointer<UInt8>) {
        if let from = bytes.baseAddress { (base + count).update(from: from, count: bytes.count) }
        count += bytes.count
    }

    private mutating func write(_ text: StaticString) {
        reserve(text.utf8CodeUnitCount)
        put(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    private mutating func write(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count += 1
    }

    private mutating func write(_ first: UInt8, _ second: UInt8) {
        reserve(2)
        base[count] = first
        base[count + 1] = second
        count += 2
    }

    private mutating func appendDecimal(_ value: Int) {
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)   // 24 bytes: Int's 19 digits
        var v = max(0, value), n = 0
        withUnsafeMutableBytes(of: &digits) { d in
            repeat {
                d[23 - n] = UInt8(0x30 + v % 10)
                v /= 10
                n += 1
            } while v > 0
            reserve(n)
            put(UnsafeBufferPointer(rebasing: d.bindMemory(to: UInt8.self)[(24 - n)...]))
        }
    }
}
