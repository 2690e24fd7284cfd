/// Bytes written through a pointer into storage that grows by doubling: one capacity
/// check per write, none per byte.
struct ByteWriter {
    private var storage: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private(set) var count = 0

    init(capacity: Int) {
        self.capacity = max(64, capacity)
        storage = .allocate(capacity: self.capacity)
    }

    /// The bytes written; the writer is spent.
    mutating func finish() -> [UInt8] {
        defer { storage.deallocate() }
        return Array(UnsafeBufferPointer(start: storage, count: count))
    }

    /// Empty again, its room kept.
    mutating func removeAll() { count = 0 }

    /// The writer is spent without its bytes.
    func release() { storage.deallocate() }

    func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        body(UnsafeBufferPointer(start: storage, count: count))
    }

    /// `n` bytes already written, from `offset`, again.
    @inline(__always) mutating func copy(from offset: Int, count n: Int) {
        reserve(n)
        (storage + count).update(from: storage + offset, count: n)
        count += n
    }

    @inline(__always) private mutating func reserve(_ n: Int) {
        guard count + n > capacity else { return }
        var grown = capacity * 2
        while grown < count + n { grown *= 2 }
        let bigger = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
        bigger.update(from: storage, count: count)
        storage.deallocate()
        storage = bigger
        capacity = grown
    }

    @inline(__always) mutating func byte(_ b: UInt8) {
        reserve(1)
        storage[count] = b
        count += 1
    }

    @inline(__always) mutating func bytes(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        reserve(bytes.count)
        (storage + count).update(from: base, count: bytes.count)
        count += bytes.count
    }

    /// A literal's bytes. Most are short: copied as a few overlapping words (the length is
    /// a constant once inlined), not through a call to memcpy.
    @inline(__always) mutating func raw(_ text: StaticString) {
        let n = text.utf8CodeUnitCount
        reserve(n)
        let from = UnsafeRawPointer(text.utf8Start), to = UnsafeMutableRawPointer(storage + count)
        func word(_ at: Int) { to.storeBytes(of: from.loadUnaligned(fromByteOffset: at, as: UInt64.self), toByteOffset: at, as: UInt64.self) }
        switch n {
        case 8...16:
            word(0); word(n - 8)
        case 17...32:
            word(0); word(8); word(n - 16); word(n - 8)
        case 33...48:
            word(0); word(8); word(16); word(24); word(n - 16); word(n - 8)
        default:
            (storage + count).update(from: text.utf8Start, count: n)
        }
        count += n
    }

    /// 16 lowercase hex digits, eight at a time: each nibble spread into a byte of its own,
    /// then made a digit or a letter without a branch.
    @inline(__always) mutating func hex(_ value: UInt64) {
        reserve(16)
        let to = UnsafeMutableRawPointer(storage + count)
        to.storeBytes(of: Self.hexDigits(UInt32(truncatingIfNeeded: value >> 32)), as: UInt64.self)
        to.storeBytes(of: Self.hexDigits(UInt32(truncatingIfNeeded: value)), toByteOffset: 8, as: UInt64.self)
        count += 16
    }

    /// The 8 hex digits of `value`, most significant first in memory.
    @inline(__always) static func hexDigits(_ value: UInt32) -> UInt64 {
        var x = UInt64(value)
        x = (x | (x << 16)) & 0x0000_FFFF_0000_FFFF
        x = (x | (x << 8)) & 0x00FF_00FF_00FF_00FF
        x = (x | (x << 4)) & 0x0F0F_0F0F_0F0F_0F0F
        // 1 in each byte whose nibble is 10 or more: those skip from '9' + 1 to 'a'.
        let letters = ((x &+ 0x0606_0606_0606_0606) >> 4) & 0x0101_0101_0101_0101
        x = x &+ 0x3030_3030_3030_3030 &+ letters &* 0x27
        return UInt64(littleEndian: x.byteSwapped)
    }

    private static let pairs: StaticString = "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"

    /// Decimal digits: a timestamp in nanoseconds has 19, written as its leading digits
    /// and two runs of exactly 8, each two digits at a time from a table.
    mutating func decimal(_ value: UInt64) {
        reserve(20)
        if value < 100_000_000 { return short(UInt32(value)) }
        if value < 10_000_000_000_000_000 {
            short(UInt32(value / 100_000_000))
            return eight(UInt32(value % 100_000_000))
        }
        let rest = value % 10_000_000_000_000_000
        short(UInt32(value / 10_000_000_000_000_000))
        eight(UInt32(rest / 100_000_000))
        eight(UInt32(rest % 100_000_000))
    }

    /// A number under 10^8, as many digits as it has (room reserved).
    @inline(__always) private mutating func short(_ value: UInt32) {
        var digits = 1, rest = value
        while rest >= 100 { rest /= 100; digits += 2 }
        if rest >= 10 { digits += 1 }
        let table = Self.pairs.utf8Start
        var v = value, at = count + digits
        while v >= 100 {
            let pair = Int(v % 100) * 2
            v /= 100
            at -= 2
            storage[at] = table[pair]
            storage[at + 1] = table[pair + 1]
        }
        if v >= 10 {
            storage[at - 2] = table[Int(v) * 2]
            storage[at - 1] = table[Int(v) * 2 + 1]
        } else {
            storage[at - 1] = UInt8(ascii: "0") + UInt8(v)
        }
        count += digits
    }

    /// Exactly 8 digits of a number under 10^8, leading zeros included (room reserved).
    @inline(__always) private mutating func eight(_ value: UInt32) {
        let table = UnsafeRawPointer(Self.pairs.utf8Start)
        let high = value / 10_000, low = value % 10_000
        let at = UnsafeMutableRawPointer(storage + count)
        at.storeBytes(of: table.loadUnaligned(fromByteOffset: Int(high / 100) * 2, as: UInt16.self), toByteOffset: 0, as: UInt16.self)
        at.storeBytes(of: table.loadUnaligned(fromByteOffset: Int(high % 100) * 2, as: UInt16.self), toByteOffset: 2, as: UInt16.self)
        at.storeBytes(of: table.loadUnaligned(fromByteOffset: Int(low / 100) * 2, as: UInt16.self), toByteOffset: 4, as: UInt16.self)
        at.storeBytes(of: table.loadUnaligned(fromByteOffset: Int(low % 100) * 2, as: UInt16.self), toByteOffset: 6, as: UInt16.self)
        count += 8
    }

    /// A short string with nothing to escape (most are: a method, a route, a status), in
    /// words and without a call: false, and nothing written, if it has something to escape.
    /// Room for 8 bytes past the string is reserved, as whole words are stored.
    @inline(__always) private mutating func clean(_ text: UnsafeBufferPointer<UInt8>, opening: Bool, closing: Bool) -> Bool {
        let n = text.count
        guard n > 0, let base = text.baseAddress else { return false }
        let from = UnsafeRawPointer(base)
        var first: UInt64, middle: UInt64 = 0, last: UInt64 = 0
        if n >= 8 {
            // Words at 0, 8 (past 16 bytes) and n - 8 cover the string, overlapping.
            first = from.loadUnaligned(as: UInt64.self)
            last = from.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
            if n > 16 { middle = from.loadUnaligned(fromByteOffset: 8, as: UInt64.self) }
            guard !Self.needsEscape(first), !Self.needsEscape(last), n <= 16 || !Self.needsEscape(middle) else { return false }
        } else {
            // The bytes past the string read as 'a', which needs no escape.
            first = 0x6161_6161_6161_6161
            for i in 0..<n { first = first & ~(0xFF << UInt64(8 * i)) | UInt64(base[i]) << UInt64(8 * i) }
            first = UInt64(littleEndian: first)
            guard !Self.needsEscape(first) else { return false }
        }
        reserve(n + 10)
        var at = UnsafeMutableRawPointer(storage + count)
        if opening { at.storeBytes(of: UInt8(ascii: "\""), as: UInt8.self); at += 1 }
        at.storeBytes(of: first, as: UInt64.self)
        if n >= 8 { at.storeBytes(of: last, toByteOffset: n - 8, as: UInt64.self) }
        if n > 16 { at.storeBytes(of: middle, toByteOffset: 8, as: UInt64.self) }
        if closing { at.storeBytes(of: UInt8(ascii: "\""), toByteOffset: n, as: UInt8.self) }
        count += n + (opening ? 1 : 0) + (closing ? 1 : 0)
        return true
    }

    /// Whether any of the 8 bytes of `w` must be escaped in a JSON string: a control byte,
    /// `"` or `\` (the classic has-less and has-zero tests, exact as to whether any).
    @inline(__always) private static func needsEscape(_ w: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        let control = (w &- ones &* 0x20) & ~w
        let quote = w ^ (ones &* 0x22), backslash = w ^ (ones &* 0x5C)
        return (control | ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash)) & highs != 0
    }

    /// Read in place: a native string's own bytes, without the copy (and its retain and
    /// release) that `withUTF8` on a `var` makes.
    mutating func string(_ s: String) {
        if s.utf8.withContiguousStorageIfAvailable({ string($0) }) == nil {
            var s = s
            s.withUTF8 { string($0) }
        }
    }

    /// One JSON string of `first`, `separator` (ASCII, nothing to escape) and `second`.
    mutating func string(_ first: String, _ separator: UInt8, _ second: String) {
        if first.utf8.withContiguousStorageIfAvailable({ string($0, closing: false) }) == nil {
            var first = first
            first.withUTF8 { string($0, closing: false) }
        }
        byte(separator)
        if second.utf8.withContiguousStorageIfAvailable({ string($0, opening: false) }) == nil {
            var second = second
            second.withUTF8 { string($0, opening: false) }
        }
    }

    /// A JSON string: `"` and `\` escaped, control bytes as `\u00XX`, the rest as it is
    /// (Swift strings are valid UTF-8). Runs without an escape are copied whole.
    mutating func string(_ text: UnsafeBufferPointer<UInt8>, opening: Bool = true, closing: Bool = true) {
        if text.count <= 24, clean(text, opening: opening, closing: closing) { return }
        reserve(text.count + 2)
        if opening {
            storage[count] = UInt8(ascii: "\"")
            count += 1
        }
        guard let base = text.baseAddress else { if closing { byte(UInt8(ascii: "\"")) }; return }
        var start = 0, i = 0
        let n = text.count
        while i < n {
            // Eight bytes at a time while none needs escaping.
            while i + 8 <= n, !Self.needsEscape(UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)) { i += 8 }
            guard i < n else { break }
            let c = base[i]
            if c >= 0x20 && c != UInt8(ascii: "\"") && c != UInt8(ascii: "\\") { i += 1; continue }
            if i > start { bytes(UnsafeBufferPointer(start: base + start, count: i - start)) }
            switch c {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): byte(UInt8(ascii: "\\")); byte(c)
            case 0x0A: raw("\\n")
            case 0x0D: raw("\\r")
            case 0x09: raw("\\t")
            default:
                raw("\\u00")
                let digits: StaticString = "0123456789abcdef"
                byte(digits.utf8Start[Int(c >> 4)])
                byte(digits.utf8Start[Int(c & 0xF)])
            }
            i += 1
            start = i
        }
        if start < n { bytes(UnsafeBufferPointer(start: base + start, count: n - start)) }
        if closing { byte(UInt8(ascii: "\"")) }
    }
}
