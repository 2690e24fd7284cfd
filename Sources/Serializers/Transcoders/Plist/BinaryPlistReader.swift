/// Reads Apple's binary property list format (`bplist00`) straight into JSON bytes.
///
/// Every offset, count and reference is bounds-checked; a reference cycle or
/// nesting beyond `maxDepth` fails instead of recursing forever. Shared references are
/// expanded, but the JSON written is charged to the `OutputBudget` as it grows, so a
/// reference DAG (object i referencing object i+1 twice: 2^n nodes from n objects)
/// fails fast instead of expanding exponentially.
struct BinaryPlistReader {
    let b: ByteReader
    /// The input's bytes, for the reads that offsets and references make (every one
    /// checked against the trailer's bounds before it is made). Valid for the transcode.
    let raw: UnsafeRawPointer
    let offsetSize: Int
    let refSize: Int
    let objectCount: Int
    let offsetTable: Int
    let maxDepth: Int
    let budget: OutputBudget
    static let onPath: Int32 = -2
    var out: [UInt8] = []
    /// Some dictionary repeats a key: the output is rebuilt with the last of each (RepeatedKeys).
    var repeatedKeys = false
    /// keyHash's table: which object each slot holds (-1: none) and its hash.
    static let keyHashSlots = 1024
    var keyHashObjects: [Int] = []
    var keyHashValues: [UInt64] = []
    /// Unsafe numbers written (`output.numbers`), counted as they are; nil once a shared
    /// container was copied (its numbers would count once, appear twice).
    var unsafeNumbers: Int? = 0
    /// Containers already written, by object number: where their JSON is in `out` and how
    /// deep they nest, so a shared one is copied rather than walked again (a DAG then
    /// costs its output's memcpy, not a walk per node). Flat arrays, 10 bytes an object.
    /// A start of -1: not written; `onPath`: being written (met again, it is a cycle),
    /// which spares a set of the open objects and a hash per object.
    var writtenStart: [Int32]
    var writtenEnd: [Int32] = []
    var writtenHeight: [UInt16] = []

    static func transcode(_ bytes: [UInt8], maxDepth: Int = 512, budget: OutputBudget? = nil) throws(TranscodeError) -> [UInt8] {
        try transcodeNotingNumbers(bytes, maxDepth: maxDepth, budget: budget).json
    }

    /// The JSON, and how many unsafe numbers it holds when that was counted as it was written.
    static func transcodeNotingNumbers(_ bytes: [UInt8], maxDepth: Int = 512, budget: OutputBudget? = nil, notesNumbers: Bool = true)
        throws(TranscodeError) -> (json: [UInt8], unsafeNumbers: Int?) {
        let (out, repeated, unsafe) = try bytes.withUnsafeBufferPointer { (raw) throws(TranscodeError) in
            var reader = try BinaryPlistReader(bytes, raw: raw, maxDepth: maxDepth, budget: budget ?? OutputBudget(input: bytes.count))
            if !notesNumbers { reader.unsafeNumbers = nil }
            let top = reader.trailerInt(16)
            // JSON is about as long as the binary plist it comes from: one buffer from the
            // start instead of doubling (each step holds the old copy and the new one).
            reader.out.reserveCapacity(min(bytes.count, reader.budget.limit))
            _ = try reader.write(object: top, depth: 0)
            try reader.budget.charge(reader.out.count, "the JSON")
            return (reader.out, reader.repeatedKeys, reader.unsafeNumbers)
        }
        if repeated { return (try RepeatedKeys.lastWins(out, maxDepth: maxDepth), nil) }
        return (out, unsafe)
    }

    init(_ bytes: [UInt8], raw: UnsafeBufferPointer<UInt8>, maxDepth: Int, budget: OutputBudget) throws(TranscodeError) {
        b = ByteReader(bytes)
        // An empty input has no base address; the length check below refuses it.
        self.raw = UnsafeRawPointer(raw.baseAddress ?? ZeroPage.bytes)
        self.maxDepth = maxDepth
        self.budget = budget
        guard bytes.count >= 8 + 32, bytes.starts(with: Array("bplist00".utf8)) else {
            throw TranscodeError("binary property list is truncated (no trailer)")
        }
        let t = bytes.count - 32
        offsetSize = Int(bytes[t + 6])
        refSize = Int(bytes[t + 7])
        guard (1...8).contains(offsetSize), (1...8).contains(refSize) else {
            throw TranscodeError("binary property list trailer has invalid integer sizes")
        }
        let count = BinaryPlistReader.uint(bytes, t + 8, 8)
        let table = BinaryPlistReader.uint(bytes, t + 24, 8)
        // Compared without overflow: the trailer's numbers are the input's, any 64-bit value.
        guard count > 0, count < UInt64(bytes.count), table >= 8, table < UInt64(t),
              count * UInt64(offsetSize) <= UInt64(t) - table else {
            throw TranscodeError("binary property list offset table is out of bounds")
        }
        objectCount = Int(count)
        offsetTable = Int(table)
        writtenStart = [Int32](repeating: -1, count: objectCount)
        writtenEnd = [Int32](repeating: 0, count: objectCount)
        writtenHeight = [UInt16](repeating: 0, count: objectCount)
        guard trailerInt(16) < objectCount else { throw TranscodeError("binary property list top object is out of range") }
    }

    func trailerInt(_ at: Int) -> Int {
        Int(truncatingIfNeeded: BinaryPlistReader.uint(b.bytes, b.count - 32 + at, 8))
    }

    static func uint(_ bytes: [UInt8], _ at: Int, _ size: Int) -> UInt64 {
        var v: UInt64 = 0
        for k in 0..<size { v = v << 8 | UInt64(bytes[at + k]) }
        return v
    }

    func offset(of object: Int) throws(TranscodeError) -> Int {
        guard object >= 0, object < objectCount else { throw TranscodeError("object reference \(object) is out of range") }
        // An 8-byte offset may not fit an Int: out of range either way, never a trap.
        let value = bigEndian(offsetTable + object * offsetSize, offsetSize)
        let at = value > UInt64(Int.max) ? -1 : Int(value)
        guard at >= 8, at < offsetTable else { throw TranscodeError("object \(object) lies outside the object area") }
        return at
    }

    /// Count from the marker's low nibble, or the int object that follows 0xF.
    func count(_ at: Int) throws(TranscodeError) -> (Int, Int) {
        let low = Int(b[at] & 0x0F)
        guard low == 0x0F else { return (low, at + 1) }
        let marker = b[at + 1]
        guard marker & 0xF0 == 0x10 else { throw TranscodeError("invalid length marker at byte \(at + 1)") }
        let size = 1 << Int(marker & 0x0F)
        guard size <= 8, at + 2 + size <= offsetTable else { throw TranscodeError("invalid length at byte \(at + 1)") }
        let v = BinaryPlistReader.uint(b.bytes, at + 2, size)
        guard v < UInt64(b.count) else { throw TranscodeError("length \(v) at byte \(at + 1) exceeds the body") }
        return (Int(v), at + 2 + size)
    }

    func span(_ start: Int, _ length: Int) throws(TranscodeError) -> Range<Int> {
        guard length >= 0, start + length <= offsetTable else { throw TranscodeError("object at byte \(start) runs past the object area") }
        return start..<(start + length)
    }

    func ref(_ at: Int) -> Int { Int(truncatingIfNeeded: bigEndian(at, refSize)) }

    /// The `size`-byte big-endian integer at `at`, which the caller has bounds-checked:
    /// one load for the sizes writers use, where `uint` reads a byte at a time.
    @inline(__always) func bigEndian(_ at: Int, _ size: Int) -> UInt64 {
        switch size {
        case 1: UInt64(raw.load(fromByteOffset: at, as: UInt8.self))
        case 2: UInt64(UInt16(bigEndian: raw.loadUnaligned(fromByteOffset: at, as: UInt16.self)))
        case 4: UInt64(UInt32(bigEndian: raw.loadUnaligned(fromByteOffset: at, as: UInt32.self)))
        case 8: UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: at, as: UInt64.self))
        default: BinaryPlistReader.uint(b.bytes, at, size)
        }
    }

    /// Grows `out` by doubling, but never past the budget's limit when that is enough:
    /// an expansion that stops at the limit then holds no more than the limit.
    mutating func reserveOutput(_ extra: Int) {
        let needed = out.count + extra
        guard needed > out.capacity else { return }
        out.reserveCapacity(max(needed, min(budget.limit, 2 * out.capacity)))
    }

    /// Writes one object's JSON; returns how many levels it nests below itself.
    mutating func write(object: Int, depth: Int) throws(TranscodeError) -> Int {
        guard depth < maxDepth else { throw TranscodeError("nesting deeper than the limit of \(maxDepth) (limits.max_json_depth)") }
        try budget.charge(out.count, "shared object references expanded to JSON")
        if object >= 0, object < objectCount, writtenStart[object] >= 0 {
            let range = Int(writtenStart[object])..<Int(writtenEnd[object])
            let height = Int(writtenHeight[object])
            guard depth + height < maxDepth else { throw TranscodeError("nesting deeper than the limit of \(maxDepth) (limits.max_json_depth)") }
            try budget.charge(out.count + range.count, "shared object references expanded to JSON")
            if height > 0 { unsafeNumbers = nil }
            // Copied in place: a slice of `out` appended to `out` would copy the whole buffer.
            let at = out.count
            // The first copy reserves the whole budget at once: pages are only touched as
            // they are written, and no later growth holds two copies of `out`. (Short shared
            // strings, dictionary keys above all, are written again rather than copied.)
            if out.capacity < budget.limit { out.reserveCapacity(budget.limit) }
            reserveOutput(range.count)
            out.appendZeros(range.count)
            out.withUnsafeMutableBufferPointer { p in
                (p.baseAddress! + at).update(from: p.baseAddress! + range.lowerBound, count: range.count)
            }
            return height
        }
        let at = try offset(of: object)
        guard writtenStart[object] != Self.onPath else { throw TranscodeError("object \(object) contains itself") }
        writtenStart[object] = Self.onPath
        let outStart = out.count
        var height = 0
        let marker = b[at]
        switch marker >> 4 {
        case 0x0:
            switch marker {
            case 0x00: out.append(contentsOf: "null".utf8)
            case 0x08: out.append(contentsOf: "false".utf8)
            case 0x09: out.append(contentsOf: "true".utf8)
            default: throw TranscodeError("unknown marker 0x\(String(marker, radix: 16)) at byte \(at)")
            }
        case 0x1:
            let size = 1 << Int(marker & 0x0F)
            let range = try span(at + 1, size)
            guard size <= 16 else { throw TranscodeError("integer of \(size) bytes at byte \(at)") }
            let numberStart = out.count
            var small = size < 8   // below 8 bytes an integer is under 2^32 (reals print shortest)
            defer {
                if !small, let counted = unsafeNumbers { unsafeNumbers = counted + NumberSafety.unsafeCount(out, from: numberStart) }
            }
            if size == 16 {
                // Two's complement over 128 bits: CF and Python's plistlib write unsigned
                // 64-bit values from 2^63 up this way (the high half zero).
                let high = BinaryPlistReader.uint(b.bytes, range.lowerBound, 8)
                let low = BinaryPlistReader.uint(b.bytes, range.lowerBound + 8, 8)
                out.append(contentsOf: String(Int128(bitPattern: UInt128(high) << 64 | UInt128(low))).utf8)
            } else {
                let raw = BinaryPlistReader.uint(b.bytes, range.lowerBound, size)
                // Sizes below 8 bytes are unsigned; 8 is two's complement.
                let negative = size == 8 && Int64(bitPattern: raw) < 0
                small = small || (negative ? 0 &- raw : raw) <= 1 << 53   // every such integer is a double
                appendDecimal(raw, negative: negative)
            }
        case 0x2:
            let size = 1 << Int(marker & 0x0F)
            let range = try span(at + 1, size)
            let raw = BinaryPlistReader.uint(b.bytes, range.lowerBound, size)
            switch size {
            case 4: out.append(contentsOf: try PlistScalars.double(Double(Float(bitPattern: UInt32(raw)))).utf8)
            case 8: out.append(contentsOf: try PlistScalars.double(Double(bitPattern: raw)).utf8)
            default: throw TranscodeError("real of \(size) bytes at byte \(at)")
            }
        case 0x3:
            guard marker == 0x33 else { throw TranscodeError("unknown marker 0x\(String(marker, radix: 16)) at byte \(at)") }
            let range = try span(at + 1, 8)
            let seconds = Double(bitPattern: BinaryPlistReader.uint(b.bytes, range.lowerBound, 8))
            JSONEscaping.appendQuoted(try PlistScalars.isoDate(secondsSince2001: seconds), to: &out)
        case 0x4:
            let (n, start) = try count(at)
            let range = try span(start, n)
            reserveOutput(Base64.encodedLength(n) + 2)
            out.append(UInt8(ascii: "\""))
            out.append(contentsOf: Base64.encode(Array(b.bytes[range])))
            out.append(UInt8(ascii: "\""))
        case 0x5, 0x6:
            try appendString(at: at, utf16: marker >> 4 == 0x6)
        case 0x8:
            let size = Int(marker & 0x0F) + 1
            let range = try span(at + 1, size)
            out.append(contentsOf: "{\"CF$UID\":\(BinaryPlistReader.uint(b.bytes, range.lowerBound, size))}".utf8)
        case 0xA:
            let (n, start) = try count(at)
            let range = try span(start, n * refSize)
            out.append(UInt8(ascii: "["))
            for k in 0..<n {
                if k > 0 { out.append(UInt8(ascii: ",")) }
                height = max(height, 1 + (try write(object: ref(range.lowerBound + k * refSize), depth: depth + 1)))
            }
            out.append(UInt8(ascii: "]"))
            remember(object, from: outStart, height: height)
        case 0xD:
            let (n, start) = try count(at)
            let range = try span(start, 2 * n * refSize)
            out.append(UInt8(ascii: "{"))
            // Each key's hash, kept here until the dictionary ends (RepeatedKeys).
            try withUnsafeTemporaryAllocation(of: UInt64.self, capacity: n) { (keys: UnsafeMutableBufferPointer<UInt64>) throws(TranscodeError) in
                for k in 0..<n {
                    if k > 0 { out.append(UInt8(ascii: ",")) }
                    let keyObject = ref(range.lowerBound + k * refSize)
                    let keyAt = try offset(of: keyObject)
                    let keyMarker = b[keyAt] >> 4
                    guard keyMarker == 0x5 || keyMarker == 0x6 else { throw TranscodeError("dictionary key at byte \(at) is not a string") }
                    let keyStart = out.count
                    // A string holds nothing: written here, without the walk's depth, budget
                    // and sharing bookkeeping (the value after it is charged as ever).
                    try appendString(at: keyAt, utf16: keyMarker == 0x6)
                    keys[k] = keyHash(keyObject, written: keyStart)
                    out.append(UInt8(ascii: ":"))
                    height = max(height, 1 + (try write(object: ref(range.lowerBound + (n + k) * refSize), depth: depth + 1)))
                }
                if !repeatedKeys && RepeatedKeys.repeats(keys) { repeatedKeys = true }
            }
            out.append(UInt8(ascii: "}"))
            remember(object, from: outStart, height: height)
        default:
            throw TranscodeError("unknown marker 0x\(String(marker, radix: 16)) at byte \(at)")
        }
        // Long strings and data too: one referenced many times is then a copy of bytes
        // already written, not an escape pass per reference. (Short ones, dictionary keys
        // above all, are quicker to escape again than to copy.)
        if (0x4...0x6).contains(marker >> 4), out.count - outStart >= 64 { remember(object, from: outStart, height: 0) }
        // Not reset on a throw: a failure ends the whole transcode.
        if writtenStart[object] == Self.onPath { writtenStart[object] = -1 }
        return height
    }

    /// The string object at `at` (ASCII, or UTF-16 big-endian) as a JSON string.
    mutating func appendString(at: Int, utf16: Bool) throws(TranscodeError) {
        let (n, start) = try count(at)
        let range = try span(start, utf16 ? n * 2 : n)
        try b.bytes.withUnsafeBufferPointer { (all) throws(TranscodeError) in
            let text = UnsafeBufferPointer(rebasing: all[range])
            guard utf16 else {
                guard UTF8Validation.isASCII(text) else { throw TranscodeError("ASCII string at byte \(at) holds non-ASCII bytes") }
                reserveOutput(n + 2)
                return JSONEscaping.appendQuoted(text, to: &out)
            }
            // Three UTF-8 bytes at most for each UTF-16 unit (four for a pair of two).
            try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 3 * n + 1) { (utf8) throws(TranscodeError) in
                let written: Int
                do throws(JSONError) {
                    written = try Self.utf8(fromUTF16BE: text, into: utf8.baseAddress!)
                } catch {
                    throw TranscodeError("UTF-16 string at byte \(at): \(error.message)")
                }
                JSONEscaping.appendQuoted(UnsafeBufferPointer(rebasing: utf8[..<written]), to: &out)
            }
        }
    }

    /// UTF-16 big-endian code units as UTF-8 at `out` (room for three bytes a unit);
    /// returns the length. A leading byte order mark is dropped.
    static func utf8(fromUTF16BE text: UnsafeBufferPointer<UInt8>, into out: UnsafeMutablePointer<UInt8>) throws(JSONError) -> Int {
        let units = text.count / 2
        @inline(__always) func unit(_ k: Int) -> UInt32 { UInt32(text[2 * k]) << 8 | UInt32(text[2 * k + 1]) }
        var k = units > 0 && unit(0) == 0xFEFF ? 1 : 0
        var w = 0
        // A writer chooses UTF-16 for text that is not ASCII: no ASCII fast path here.
        while k < units {
            var cp = unit(k)
            let at = 2 * k
            k += 1
            if cp < 0x80 {
                out[w] = UInt8(truncatingIfNeeded: cp)
                w += 1
                continue
            }
            if cp >= 0xD800 && cp < 0xDC00 {
                guard k < units else { throw JSONError("lone UTF-16 surrogate", offset: at) }
                let low = unit(k)
                guard low >= 0xDC00 && low < 0xE000 else { throw JSONError("lone UTF-16 surrogate", offset: at) }
                cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00)
                k += 1
            } else if cp >= 0xDC00 && cp < 0xE000 {
                throw JSONError("invalid UTF-16 code unit", offset: at)
            }
            UTF8Validation.encode(cp, into: out, at: &w)
        }
        return w
    }

    /// `utf8(fromUTF16BE:into:)` on an array; nil where it fails (tests and the fuzzer).
    static func utf8(fromUTF16BEForTesting text: [UInt8]) -> [UInt8]? {
        let units = text.count / 2
        var out = [UInt8](repeating: 0, count: 3 * units + 1)
        let written = text.withUnsafeBufferPointer { input in
            out.withUnsafeMutableBufferPointer { o in
                try? utf8(fromUTF16BE: UnsafeBufferPointer(rebasing: input[..<(2 * units)]), into: o.baseAddress!)
            }
        }
        return written.map { Array(out[..<$0]) }
    }

    /// A 64-bit integer's decimal digits (`raw` read as two's complement when `negative`),
    /// written without making a String.
    /// The hash of the key just written at `start` (RepeatedKeys). Writers share one object
    /// for equal keys, so a dictionary's keys mostly come from a few objects: their hashes
    /// are kept in a small table by object number (fixed size, whatever the document).
    mutating func keyHash(_ object: Int, written start: Int) -> UInt64 {
        let slot = object & (Self.keyHashSlots - 1)
        if keyHashObjects.isEmpty {
            keyHashObjects = [Int](repeating: -1, count: Self.keyHashSlots)
            keyHashValues = [UInt64](repeating: 0, count: Self.keyHashSlots)
        }
        if keyHashObjects[slot] == object { return keyHashValues[slot] }
        let hash = out.withUnsafeBytes { RepeatedKeys.hash(UnsafeRawBufferPointer(rebasing: $0[start...])) }
        keyHashObjects[slot] = object
        keyHashValues[slot] = hash
        return hash
    }

    mutating func appendDecimal(_ raw: UInt64, negative: Bool) {
        var magnitude = negative ? 0 &- raw : raw
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)   // 24 bytes: 20 digits and a sign
        withUnsafeMutableBytes(of: &digits) { buffer in
            var k = buffer.count
            repeat {
                k -= 1
                buffer[k] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude != 0
            if negative { k -= 1; buffer[k] = UInt8(ascii: "-") }
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[k...]))
        }
    }

    /// Keeps a written object's place (output offsets fit Int32: it is capped at 32 MiB).
    mutating func remember(_ object: Int, from start: Int, height: Int) {
        guard out.count <= Int(Int32.max) else { return }
        writtenStart[object] = Int32(start)
        writtenEnd[object] = Int32(out.count)
        writtenHeight[object] = UInt16(min(height, Int(UInt16.max)))
    }
}
