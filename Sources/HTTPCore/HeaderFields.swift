#if canImport(Glibc)
import Glibc
#endif

/// Header fields in order, as the wire carries them: one buffer of `Name: value` lines,
/// each ended by CRLF (an upstream response's as received, a request's as it is sent
/// upstream, a reply's as it is written). Names compare ASCII case-insensitively; nothing becomes
/// a String unless asked, so a proxy that forwards most fields and reads two or three
/// makes no String for the rest.
public struct HeaderFields: Sendable, Equatable, ExpressibleByArrayLiteral {
    /// The lines; read as fields by `forEach` (a line without a colon is skipped, a bare
    /// LF ends a line too).
    public private(set) var bytes: [UInt8]

    public init() { bytes = [] }

    /// Lines as received (`Name: value`, each ended by CRLF or LF).
    public init(lines: [UInt8]) { bytes = lines }

    public init(_ fields: [(String, String)]) {
        bytes = []
        for (name, value) in fields { append(name, value) }
    }

    public init(arrayLiteral fields: (String, String)...) { self.init(fields) }

    public var isEmpty: Bool { bytes.isEmpty }

    // MARK: writing

    /// One field. The value's leading and trailing spaces and tabs are not part of it
    /// (RFC 9110 §5.5) and are left out, so a field reads back as it was given.
    public mutating func append(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {
        var value = value
        if let first = value.first, let last = value.last, first == 0x20 || first == 0x09 || last == 0x20 || last == 0x09 {
            value = Self.trimmed(value)
        }
        if bytes.capacity == 0 { bytes.reserveCapacity(512) }
        // The line made on the stack and appended in one copy: each append to the Array
        // pays its checks, five of them per field cost more than the bytes.
        let total = name.count + value.count + 4
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: total) { line in
            let out = line.baseAddress!
            if let n = name.baseAddress { out.update(from: n, count: name.count) }
            out[name.count] = UInt8(ascii: ":")
            out[name.count + 1] = UInt8(ascii: " ")
            if let v = value.baseAddress { (out + name.count + 2).update(from: v, count: value.count) }
            out[total - 2] = 0x0D
            out[total - 1] = 0x0A
            bytes.append(contentsOf: UnsafeBufferPointer(line))
        }
    }

    public mutating func append(_ name: StaticString, value: UnsafeBufferPointer<UInt8>) {
        name.withUTF8Buffer { append(name: $0, value: value) }
    }

    public mutating func append(_ name: String, _ value: String) {
        // Read in place (native and small strings are contiguous): a copy to call
        // `withUTF8` on costs a retain and a release of each, and replies add several.
        let added = name.utf8.withContiguousStorageIfAvailable { n in
            value.utf8.withContiguousStorageIfAvailable { append(name: n, value: $0) } != nil
        } ?? false
        if added { return }
        var name = name, value = value
        name.withUTF8 { name in value.withUTF8 { append(name: name, value: $0) } }
    }

    /// A line as received (it ends with LF), appended whole.
    public mutating func append(line: UnsafeBufferPointer<UInt8>) {
        if bytes.capacity == 0 { bytes.reserveCapacity(1024) }
        bytes.append(contentsOf: line)
    }

    public mutating func append(contentsOf other: HeaderFields) {
        bytes.append(contentsOf: other.bytes)
    }

    public mutating func reserveCapacity(_ count: Int) { bytes.reserveCapacity(count) }

    public mutating func removeAll() { bytes.removeAll(keepingCapacity: true) }

    /// Every field named `name` (any case) taken out.
    public mutating func remove(_ name: String) {
        var kept = HeaderFields()
        var name = name
        name.withUTF8 { wanted in
            forEach { field, value in
                if !Self.equalsIgnoringCase(field, wanted) { kept.append(name: field, value: value) }
            }
        }
        self = kept
    }

    /// `value` without leading and trailing spaces and tabs (RFC 9110 §5.5's OWS).
    public static func trimmed(_ value: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        var start = 0, end = value.count
        while start < end && (value[start] == 0x20 || value[start] == 0x09) { start += 1 }
        while end > start && (value[end - 1] == 0x20 || value[end - 1] == 0x09) { end -= 1 }
        return UnsafeBufferPointer(rebasing: value[start..<end])
    }

    static func equalsIgnoringCase(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        for k in 0..<a.count where HeaderNames.lower(a[k]) != HeaderNames.lower(b[k]) { return false }
        return true
    }

    // MARK: reading

    /// Each field's raw name and its value without surrounding whitespace, in order.
    public func forEach(_ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Void) {
        scan { name, value in
            body(name, value)
            return true
        }
    }

    /// The fields in order until `body` returns false.
    func scan(_ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Bool) {
        bytes.withUnsafeBufferPointer { all in
            guard let base = all.baseAddress else { return }
            var lineStart = 0
            while lineStart < all.count {
                let lineEnd = memchr(base + lineStart, 0x0A, all.count - lineStart)
                    .map { UnsafePointer<UInt8>($0.assumingMemoryBound(to: UInt8.self)) - base } ?? all.count
                defer { lineStart = lineEnd + 1 }
                guard let found = memchr(base + lineStart, Int32(UInt8(ascii: ":")), lineEnd - lineStart) else { continue }
                let colon = UnsafePointer<UInt8>(found.assumingMemoryBound(to: UInt8.self)) - base
                var start = colon + 1, end = lineEnd
                while start < end && (all[start] == 0x20 || all[start] == 0x09) { start += 1 }
                while end > start && (all[end - 1] == 0x20 || all[end - 1] == 0x09 || all[end - 1] == 0x0D) { end -= 1 }
                if !body(UnsafeBufferPointer(rebasing: all[lineStart..<colon]), UnsafeBufferPointer(rebasing: all[start..<end])) { return }
            }
        }
    }

    /// The first field named `name` (any case): its value as bytes, handed to `body`; nil
    /// when there is none. The one lookup: `first` and every reader of one field use it.
    public func withFirst<R>(_ name: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R? {
        var name = name
        var result: R?
        name.withUTF8 { wanted in
            scan { field, value in
                guard Self.equalsIgnoringCase(field, wanted) else { return true }
                result = body(value)
                return false
            }
        }
        return result
    }

    /// The first field whose name is among `names`: its value handed to `body`; false when
    /// there is none. Not generic, so a caller in another module pays no type-metadata
    /// lookup (the stream check asks this of every upstream answer).
    public func visitFirst(_ names: HeaderNames, _ body: (UnsafeBufferPointer<UInt8>) -> Void) -> Bool {
        var found = false
        scan { field, value in
            guard names.contains(field) else { return true }
            found = true
            body(value)
            return false
        }
        return found
    }

    /// The value of the first field named `name` (any case), if there is one.
    public func first(_ name: String) -> String? {
        withFirst(name) { String(decoding: $0, as: UTF8.self) }
    }

    /// Every value of the fields named `name` (any case), in order.
    public func values(_ name: String) -> [String] {
        var name = name
        var found: [String] = []
        name.withUTF8 { wanted in
            forEach { field, value in
                if Self.equalsIgnoringCase(field, wanted) { found.append(String(decoding: value, as: UTF8.self)) }
            }
        }
        return found
    }

    /// Every field as (name, value), in order.
    public var pairs: [(String, String)] { pairs(where: { _ in true }) }

    /// The fields whose raw name `keep` accepts, as (name, value), in order.
    public func pairs(where keep: (UnsafeBufferPointer<UInt8>) -> Bool) -> [(String, String)] {
        var result: [(String, String)] = []
        appendPairs(where: keep, to: &result)
        return result
    }

    /// The same, appended to `result`.
    public func appendPairs(where keep: (UnsafeBufferPointer<UInt8>) -> Bool, to result: inout [(String, String)]) {
        forEach { name, value in
            guard keep(name) else { return }
            result.append((String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self)))
        }
    }

    /// The fields `keep` accepts, leaving out those this message's Connection header names
    /// (hop-by-hop: never forwarded), copied as bytes (no String made). One pass over the
    /// lines; the rare message whose Connection names a field has what was taken filtered after.
    public func appendEndToEnd(where keep: (UnsafeBufferPointer<UInt8>) -> Bool, to result: inout HeaderFields) {
        let firstByte = result.bytes.count
        var named: HeaderNames?
        forEach { name, value in
            if HeaderNames.isConnection(name) {
                var options = named ?? HeaderNames([])
                options.addConnectionOptions(value)
                named = options
            }
            if keep(name) { result.append(name: name, value: value) }
        }
        guard let named, !named.isEmpty else { return }
        let taken = HeaderFields(lines: Array(result.bytes[firstByte...]))
        result.bytes.removeSubrange(firstByte...)
        taken.forEach { name, value in if !named.contains(name) { result.append(name: name, value: value) } }
    }

    /// Every field `keep` accepts, copied as bytes.
    public func appending(where keep: (UnsafeBufferPointer<UInt8>) -> Bool, to result: inout HeaderFields) {
        forEach { name, value in if keep(name) { result.append(name: name, value: value) } }
    }

    /// Whether some field's name is in `names`.
    public func contains(any names: HeaderNames) -> Bool {
        var found = false
        forEach { name, _ in if !found, names.contains(name) { found = true } }
        return found
    }
}
