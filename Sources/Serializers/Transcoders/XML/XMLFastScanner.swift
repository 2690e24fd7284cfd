internal import CLibxml2
#if canImport(Glibc)
import Glibc
#endif

/// Why the fast path stopped: the body uses something it leaves to libxml2 (which then
/// parses the whole body, decides whether it is well formed and words any error), or the
/// JSON builder refused it (depth, output or name limits: the same refusal either way).
enum XMLFastStop: Error {
    case unsupported
    case failed(TranscodeError)
}

/// XML → JSON events without libxml2, for the documents most upstreams send: UTF-8, an
/// optional XML declaration, ASCII names, namespaces, attributes, text with the predefined
/// entities and character references, CDATA, comments and processing instructions (checked
/// and skipped: the builder has no use for them). It feeds the JSON builder the events
/// libxml2's SAX2 parser would (names interned, line ends and attribute whitespace
/// normalized, references replaced) and checks what XML 1.0 and Namespaces require of those
/// constructs. Anything else — a DOCTYPE, a non-ASCII name, a malformed byte, an unbound
/// prefix, 257 levels or attributes — is `unsupported`, and libxml2 parses the body from the
/// start: the fast path never decides that a document is malformed, and never accepts one
/// libxml2 refuses (fuzz/xml checks both). With the builder it takes about half the time of
/// libxml2's parse alone (BENCHMARKS.md, issue 13, eighth part).
struct XMLFastScanner: ~Copyable {
    struct Attribute {
        var prefix: UnsafePointer<UInt8>?
        var prefixID: Int32
        var local: UnsafePointer<UInt8>
        var localID: Int32
        var start: Int       // in the input, or in `scratch` when `decoded`
        var end: Int
        var decoded: Bool
    }
    /// A namespace in scope; its URI sits NUL-terminated in `uris`.
    struct Binding {
        var prefix: UnsafePointer<UInt8>?
        var prefixID: Int32
        var previous: Int32  // the binding of the same prefix it hides, or -1
        var uriStart: Int32
    }
    struct Open {
        var nameStart: Int
        var nameLength: Int
        var bindings: Int    // `bindings.count` before its declarations
    }

    /// libxml2's own limits are 257 levels (xmlParserMaxDepth, 256, is checked before an
    /// element opens) and 10^7-byte attribute values, CDATA sections and comments; the
    /// fast path leaves documents near them to it.
    static let maxOpen = 256
    static let maxRun = 9_000_000
    static let maxAttributes = XMLAttributeScan.limit
    static let xmlNamespace = Array("http://www.w3.org/XML/1998/namespace".utf8)
    static let xmlnsNamespace = Array("http://www.w3.org/2000/xmlns/".utf8)

    let p: UnsafePointer<UInt8>
    let n: Int
    var i = 0
    var names: XMLNameInterner
    /// Attribute values that needed decoding, for one start tag.
    var scratch = ByteBuffer(capacity: 1024)
    var uris = ByteBuffer(capacity: 1024)
    var attributes = FlatArray<Attribute>()
    var declarations = FlatArray<Attribute>()
    var open = FlatArray<Open>()
    var bindings = FlatArray<Binding>()
    // Per interned name: its innermost binding as a prefix (-1: unbound), and the start tag
    // (serial) that last used it as an attribute's local name or declared it as a prefix.
    var innermost = FlatArray<Int32>()
    var usedAt = FlatArray<Int32>()
    var declaredAt = FlatArray<Int32>()
    var serial: Int32 = 0
    let defaultID: Int32, xmlID: Int32, xmlnsID: Int32
    /// The start tag as libxml2's startElementNs hands it over: (prefix, URI) pairs and
    /// (local, prefix, URI, value, value end) quintuples.
    let namespaceArguments: UnsafeMutablePointer<UnsafePointer<UInt8>?>
    let attributeArguments: UnsafeMutablePointer<UnsafePointer<UInt8>?>

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        p = bytes.baseAddress!
        n = bytes.count
        var table = XMLNameInterner()
        defaultID = Self.intern("", in: &table).1
        let xml = Self.intern("xml", in: &table)
        xmlID = xml.1
        xmlnsID = Self.intern("xmlns", in: &table).1
        names = table
        namespaceArguments = .allocate(capacity: 2 * (Self.maxAttributes + 1))
        attributeArguments = .allocate(capacity: 5 * (Self.maxAttributes + 1))
        growTables()
        // `xml` is bound everywhere, and never popped.
        uris.append(Self.xmlNamespace)
        uris.append(0)
        bindings.append(Binding(prefix: xml.0, prefixID: xmlID, previous: -1, uriStart: 0))
        innermost[Int(xmlID)] = 0
    }

    static func intern(_ name: String, in table: inout XMLNameInterner) -> (UnsafePointer<UInt8>, Int32) {
        var hash = XMLNameInterner.seed
        for c in name.utf8 { hash = XMLNameInterner.mix(hash, c) }
        let bytes = Array(name.utf8) + [0]
        return bytes.withUnsafeBufferPointer { table.intern($0.baseAddress!, $0.count - 1, hash: hash)! }
    }

    deinit {
        namespaceArguments.deallocate()
        attributeArguments.deallocate()
    }

    mutating func growTables() {
        while innermost.count < names.count {
            innermost.append(-1)
            usedAt.append(0)
            declaredAt.append(0)
        }
    }

    /// The whole document, events into `core`.
    mutating func run(into core: inout XMLJSONCore) throws(XMLFastStop) {
        if n >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF { i = 3 }
        if has("<?xml", at: i) && i + 5 < n && XMLBytes.isSpace(p[i + 5]) { try declaration() }
        try misc()
        guard i + 1 < n, p[i] == 0x3C, XMLBytes.isNameStart(p[i + 1]) else { throw .unsupported }
        try startTag(&core)
        while open.count > 0 {
            try text(&core)
            // At a '<' (text stops only there).
            guard i + 1 < n else { throw .unsupported }
            let c = p[i + 1]
            if c == 0x2F {
                try endTag(&core)
            } else if XMLBytes.isNameStart(c) {
                try startTag(&core)
            } else if has("<!--", at: i) {
                try comment()
            } else if has("<![CDATA[", at: i) {
                try cdata(&core)
            } else if c == 0x3F {
                try processingInstruction()
            } else {
                throw .unsupported
            }
        }
        try misc()
        guard i == n else { throw .unsupported }
    }

    @inline(__always)
    func has(_ literal: StaticString, at k: Int) -> Bool {
        let count = literal.utf8CodeUnitCount
        return k + count <= n && memcmp(p + k, literal.utf8Start, count) == 0
    }

    @inline(__always)
    mutating func skipSpace() -> Bool {
        let start = i
        while i < n && XMLBytes.isSpace(p[i]) { i += 1 }
        return i > start
    }

    /// Whitespace, comments and processing instructions, before and after the root element.
    mutating func misc() throws(XMLFastStop) {
        while true {
            _ = skipSpace()
            if has("<!--", at: i) {
                try comment()
            } else if has("<?", at: i) {
                try processingInstruction()
            } else {
                return
            }
        }
    }

    /// A qualified name: (prefix, its id or -1, local part, its id), interned.
    @inline(__always)
    mutating func qualifiedName() throws(XMLFastStop) -> (UnsafePointer<UInt8>?, Int32, UnsafePointer<UInt8>, Int32) {
        let start = i
        guard i < n, XMLBytes.isNameStart(p[i]) else { throw .unsupported }
        var hash = XMLNameInterner.mix(XMLNameInterner.seed, p[i])
        var colon = -1
        var prefixHash: UInt32 = 0
        i += 1
        while i < n {
            let c = p[i]
            if XMLBytes.isNameByte(c) {
                hash = XMLNameInterner.mix(hash, c)
            } else if c == 0x3A && colon < 0 {
                colon = i
                prefixHash = hash
                hash = XMLNameInterner.seed
            } else {
                break
            }
            i += 1
        }
        // A non-ASCII byte may continue the name: libxml2's case, as is a second colon.
        guard i < n, p[i] < 0x80, p[i] != 0x3A, i - start <= 1000 else { throw .unsupported }
        guard colon >= 0 else {
            guard let local = names.intern(p + start, i - start, hash: hash) else { throw .unsupported }
            return (nil, -1, local.0, local.1)
        }
        guard colon + 1 < i, XMLBytes.isNameStart(p[colon + 1]),
              let prefix = names.intern(p + start, colon - start, hash: prefixHash),
              let local = names.intern(p + colon + 1, i - colon - 1, hash: hash) else { throw .unsupported }
        return (prefix.0, prefix.1, local.0, local.1)
    }

    mutating func startTag(_ core: inout XMLJSONCore) throws(XMLFastStop) {
        guard open.count < Self.maxOpen else { throw .unsupported }
        i += 1
        let nameStart = i
        let (prefix, prefixID, local, _) = try qualifiedName()
        let nameLength = i - nameStart
        attributes.truncate(to: 0)
        declarations.truncate(to: 0)
        scratch.truncate(to: 0)
        var selfClosing = false
        while true {
            guard i < n else { throw .unsupported }
            if p[i] == 0x3E {
                i += 1
                break
            }
            if p[i] == 0x2F {
                guard i + 1 < n, p[i + 1] == 0x3E else { throw .unsupported }
                i += 2
                selfClosing = true
                break
            }
            // Attributes are separated by whitespace.
            guard skipSpace(), i < n else { throw .unsupported }
            if p[i] == 0x3E || p[i] == 0x2F { continue }
            try attribute()
        }
        serial &+= 1
        growTables()
        let bindingsBefore = bindings.count
        try declare()
        if prefixID >= 0 && innermost[Int(prefixID)] < 0 { throw .unsupported }
        for k in 0..<attributes.count {
            let a = attributes[k]
            if a.prefixID >= 0 && innermost[Int(a.prefixID)] < 0 { throw .unsupported }
            // Two attributes of one local name: a duplicate, or two prefixes that may name
            // one namespace; libxml2 tells which.
            if usedAt[Int(a.localID)] == serial { throw .unsupported }
            usedAt[Int(a.localID)] = serial
            let base = attributeArguments + 5 * k
            let values = a.decoded ? UnsafePointer(scratch.base) : p
            base[0] = a.local
            base[1] = a.prefix
            base[2] = nil
            base[3] = values + a.start
            base[4] = values + a.end
        }
        let declared = bindings.count - bindingsBefore
        for k in 0..<declared {
            let binding = bindings[bindingsBefore + k]
            namespaceArguments[2 * k] = binding.prefix
            namespaceArguments[2 * k + 1] = UnsafePointer(uris.base + Int(binding.uriStart))
        }
        open.append(Open(nameStart: nameStart, nameLength: nameLength, bindings: bindingsBefore))
        do {
            try core.startElement(XMLStartTag(local, prefix, Int32(declared), namespaceArguments,
                                              Int32(attributes.count), attributeArguments))
        } catch {
            throw .failed(error)
        }
        if selfClosing { try endElement(&core) }
    }

    /// One attribute or namespace declaration, name to closing quote.
    mutating func attribute() throws(XMLFastStop) {
        let (prefix, prefixID, local, localID) = try qualifiedName()
        let quote = try openingQuote()
        let start = i
        while i < n {
            let c = p[i]
            if c == quote || c == 0x26 || c == 0x3C || c < 0x20 || c >= 0x80 { break }
            i += 1
        }
        guard i < n else { throw .unsupported }
        var value = Attribute(prefix: prefix, prefixID: prefixID, local: local, localID: localID,
                              start: start, end: i, decoded: false)
        if p[i] != quote {
            value.decoded = true
            value.start = scratch.count
            scratch.append(UnsafeBufferPointer(start: p + start, count: i - start))
            try decodeValue(quote)
            value.end = scratch.count
        }
        i += 1
        guard i - start <= Self.maxRun, attributes.count + declarations.count < Self.maxAttributes else {
            throw .unsupported
        }
        if prefix == nil && localID == xmlnsID {
            value.prefix = nil
            value.prefixID = defaultID
            declarations.append(value)
        } else if prefixID == xmlnsID {
            value.prefix = local
            value.prefixID = localID
            declarations.append(value)
        } else {
            attributes.append(value)
        }
    }

    /// Binds this start tag's namespace declarations (each is reported, even one that
    /// repeats the binding in scope: libxml2 drops those only under XML_PARSE_NSCLEAN).
    mutating func declare() throws(XMLFastStop) {
        for k in 0..<declarations.count {
            let d = declarations[k]
            let slot = Int(d.prefixID)
            guard declaredAt[slot] != serial else { throw .unsupported }
            declaredAt[slot] = serial
            let uri = UnsafeBufferPointer(start: (d.decoded ? UnsafePointer(scratch.base) : p) + d.start,
                                          count: d.end - d.start)
            if d.prefixID != defaultID && (d.prefixID == xmlID || d.prefixID == xmlnsID || uri.isEmpty) {
                throw .unsupported
            }
            if uri.elementsEqual(Self.xmlNamespace) || uri.elementsEqual(Self.xmlnsNamespace) { throw .unsupported }
            let inner = innermost[slot]
            let uriStart = Int32(truncatingIfNeeded: uris.count)
            uris.append(uri)
            uris.append(0)
            // libxml2 refuses a namespace name that is not a URI reference by its own parser.
            if !uri.isEmpty {
                guard let parsed = xmlParseURI(UnsafeRawPointer(uris.base + Int(uriStart)).assumingMemoryBound(to: CChar.self)) else {
                    throw .unsupported
                }
                xmlFreeURI(parsed)
            }
            bindings.append(Binding(prefix: d.prefix, prefixID: d.prefixID, previous: inner, uriStart: uriStart))
            innermost[slot] = Int32(truncatingIfNeeded: bindings.count - 1)
        }
    }

    mutating func endTag(_ core: inout XMLJSONCore) throws(XMLFastStop) {
        let element = open[open.count - 1]
        i += 2
        guard i + element.nameLength < n, memcmp(p + i, p + element.nameStart, element.nameLength) == 0 else {
            throw .unsupported
        }
        i += element.nameLength
        _ = skipSpace()
        guard i < n, p[i] == 0x3E else { throw .unsupported }
        i += 1
        try endElement(&core)
    }

    mutating func endElement(_ core: inout XMLJSONCore) throws(XMLFastStop) {
        let element = open[open.count - 1]
        open.removeLast(1)
        if bindings.count > element.bindings {
            for k in stride(from: bindings.count - 1, through: element.bindings, by: -1) {
                innermost[Int(bindings[k].prefixID)] = bindings[k].previous
            }
            uris.truncate(to: Int(bindings[element.bindings].uriStart))
            bindings.truncate(to: element.bindings)
        }
        do { try core.endElement() } catch { throw .failed(error) }
    }
}
