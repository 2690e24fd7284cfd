@testable import Serializers
import HTTPCore

// The form decoder as it was before the flat rewrite (tree of objects, one per field):
// the differential oracle for fuzz/form. Kept only here.

/// Decodes `application/x-www-form-urlencoded` into a JSON object, the inverse of
/// AF's query-string encoding: `a=1&b[]=x&c[d]=y` → `{"a":"1","b":["x"],"c":{"d":"y"}}`.
///
/// A bare key (`a`) is null, `a=` is the empty string, `+` is a space. Key order is
/// first appearance; a repeated plain key keeps the last value; `a[][k]` starts a
/// new object in the array when the last one already has `k` (Rack's rule). A key
/// used both as a scalar and as a container is an error, not a silent overwrite.
///
/// Bounded work (DESIGN §5): a key nests at most `maxDepth` levels (`a[b][c]` is three),
/// and inserting a key walks its path once, so time and memory stay linear in the body.
enum ReferenceFormDecoder {
    static func decode(_ body: [UInt8], charset: String? = nil,
                              maxDepth: Int = JSONReadOptions.defaultMaxDepth) throws(TranscodeError) -> JSONValue {
        let root = ReferenceFormNode.object()
        var offset = 0
        for pair in body.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: false) {
            defer { offset += pair.count + 1 }
            if pair.isEmpty { continue }
            let eq = pair.firstIndex(of: UInt8(ascii: "="))
            let rawKey = eq.map { pair[pair.startIndex..<$0] } ?? pair[...]
            let key = try Self.text(Self.percentDecoded(rawKey, at: offset), charset: charset, at: offset)
            var value: JSONValue = .null
            if let eq {
                let valueOffset = offset + (eq - pair.startIndex) + 1
                let raw = pair[(eq + 1)...]
                value = .string(try Self.text(Self.percentDecoded(raw, at: valueOffset), charset: charset, at: valueOffset))
            }
            let path = keyPath(key)
            guard path.count <= maxDepth else {
                throw TranscodeError("form field starting at byte \(offset) nests \(path.count) levels deep, deeper than the limit of \(maxDepth) (limits.max_json_depth)")
            }
            try insert(value, path: path, from: 0, into: root, key: key)
        }
        return root.json
    }

    static func percentDecoded(_ bytes: ArraySlice<UInt8>, at offset: Int) throws(TranscodeError) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = bytes.startIndex
        while i < bytes.endIndex {
            let c = bytes[i]
            if c == UInt8(ascii: "+") {
                out.append(0x20)
            } else if c == UInt8(ascii: "%") {
                guard i + 2 < bytes.endIndex, let hi = Hex.value(bytes[i + 1]), let lo = Hex.value(bytes[i + 2]) else {
                    throw TranscodeError("invalid percent-escape at byte \(offset + i - bytes.startIndex)")
                }
                out.append(hi << 4 | lo)
                i += 2
            } else {
                out.append(c)
            }
            i += 1
        }
        return out
    }

    static func text(_ bytes: [UInt8], charset: String?, at offset: Int) throws(TranscodeError) -> String {
        do throws(TranscodeError) {
            return String(decoding: try TextDecoding.utf8(bytes, charset: charset), as: UTF8.self)
        } catch {
            throw TranscodeError("\(error.description) of the field starting at byte \(offset)")
        }
    }

    /// `a[b][]` → ["a", "b", ""]; a key without well-formed brackets is taken whole.
    static func keyPath(_ key: String) -> [String] {
        guard let open = key.firstIndex(of: "["), open != key.startIndex, key.hasSuffix("]") else { return [key] }
        var path = [String(key[..<open])]
        var rest = key[open...]
        while rest.first == "[" {
            guard let close = rest.firstIndex(of: "]") else { return [key] }
            path.append(String(rest[rest.index(after: rest.startIndex)..<close]))
            rest = rest[rest.index(after: close)...]
        }
        return rest.isEmpty ? path : [key]
    }

    /// Whether `path[from...]` already leads to a value under `node` (Rack's "key taken" test).
    static func occupied(_ node: ReferenceFormNode, _ path: [String], from: Int) -> Bool {
        var current = node
        for k in from..<path.count {
            let name = path[k]
            guard !name.isEmpty, current.isObject, let next = current.child(name) else { return false }
            if k == path.count - 1 { return true }
            current = next
        }
        return false
    }

    /// Inserts `value` at `path[from...]` under `node`, walking down level by level (no
    /// copy of the path per level: that made deep keys quadratic).
    static func insert(_ value: JSONValue, path: [String], from start: Int, into start0: ReferenceFormNode, key: String) throws(TranscodeError) {
        let conflict = TranscodeError("form field '\(key.prefix(200))' conflicts with an earlier field of another shape")
        var node = start0
        var k = start
        while true {
            let name = path[k]
            if k == path.count - 1 {
                guard node.child(name)?.isContainer != true else { throw conflict }
                node.set(name, .leaf(value))
                return
            }
            if path[k + 1].isEmpty {
                let array = node.child(name) ?? node.set(name, .array())
                guard array.isArray else { throw conflict }
                if k + 2 == path.count { array.items.append(.leaf(value)); return }
                if let last = array.items.last, last.isObject, !occupied(last, path, from: k + 2) {
                    node = last
                } else {
                    let fresh = ReferenceFormNode.object()
                    array.items.append(fresh)
                    node = fresh
                }
                k += 2
                continue
            }
            let object = node.child(name) ?? node.set(name, .object())
            guard object.isObject else { throw conflict }
            node = object
            k += 1
        }
    }
}

/// A mutable, ordered tree used only while decoding one form body.
final class ReferenceFormNode {
    enum Kind { case leaf(JSONValue), array, object }
    let kind: Kind
    var items: [ReferenceFormNode] = []
    var keys: [String] = []
    var children: [String: ReferenceFormNode] = [:]

    init(_ kind: Kind) { self.kind = kind }
    static func leaf(_ v: JSONValue) -> ReferenceFormNode { ReferenceFormNode(.leaf(v)) }
    static func array() -> ReferenceFormNode { ReferenceFormNode(.array) }
    static func object() -> ReferenceFormNode { ReferenceFormNode(.object) }

    var isArray: Bool { if case .array = kind { return true }; return false }
    var isObject: Bool { if case .object = kind { return true }; return false }
    var isContainer: Bool { isArray || isObject }

    func child(_ key: String) -> ReferenceFormNode? { children[key] }

    @discardableResult
    func set(_ key: String, _ node: ReferenceFormNode) -> ReferenceFormNode {
        if children[key] == nil { keys.append(key) }
        children[key] = node
        return node
    }

    var json: JSONValue {
        switch kind {
        case .leaf(let v): return v
        case .array: return .array(items.map(\.json))
        case .object: return .object(keys.map { ($0, children[$0]!.json) })
        }
    }
}
