internal import CLibxml2
#if canImport(Glibc)
import Glibc
#endif


/// One start tag as libxml2's `startElementNs` reports it.
struct XMLStartTag {
    let localName: UnsafePointer<UInt8>
    let prefix: UnsafePointer<UInt8>?
    /// `nsCount` pairs of (prefix or nil, URI).
    let namespaces: UnsafeMutablePointer<UnsafePointer<UInt8>?>?
    let nsCount: Int
    /// `attributeCount` quintuples of (localname, prefix, URI, value, valueEnd).
    let attributes: UnsafeMutablePointer<UnsafePointer<UInt8>?>?
    let attributeCount: Int

    /// From `startElementNs`'s arguments.
    @inline(__always)
    init(_ localName: UnsafePointer<UInt8>?, _ prefix: UnsafePointer<UInt8>?, _ nsCount: Int32,
         _ namespaces: UnsafeMutablePointer<UnsafePointer<UInt8>?>?, _ attributeCount: Int32,
         _ attributes: UnsafeMutablePointer<UnsafePointer<UInt8>?>?) {
        self.localName = localName!
        self.prefix = prefix
        self.namespaces = namespaces
        self.nsCount = Int(nsCount)
        self.attributes = attributes
        self.attributeCount = Int(attributeCount)
    }
}

/// Drives libxml2's SAX2 parser over a whole body.
///
/// Safety policy: entity declarations are refused (which stops billion-laughs and
/// external entities at the first `<!ENTITY`), only the five predefined entities
/// resolve, no DTD is loaded, nothing is fetched (`XML_PARSE_NONET`), and libxml2's
/// own limits apply (256 nested elements, text nodes up to 10 MB). Encoding comes from the
/// byte-order mark and the prolog, and any but UTF-8 is converted before parsing
/// (XMLEncoding); the result is always UTF-8.
enum XMLSAXParser {
    static let initialized: Void = { xmlInitParser() }()

    static func parse(_ body: [UInt8], sink: XMLEventSink) throws(TranscodeError) {
        try parse(utf8: utf8(body), sink: sink)
    }

    /// The body as both XML parsers read it: UTF-8 (or declared so), whatever its encoding.
    /// The size bound keeps a converted body (at most 3 bytes a byte) within libxml2's
    /// 32-bit lengths.
    static func utf8(_ body: [UInt8]) throws(TranscodeError) -> [UInt8] {
        guard body.count < Int(Int32.max) / 3 else { throw TranscodeError("XML body larger than 682 MiB") }
        return try XMLEncoding.utf8Copy(of: body) ?? body
    }

    /// A body `utf8(_:)` has returned.
    static func parse(utf8 bytes: [UInt8], sink: XMLEventSink) throws(TranscodeError) {
        _ = initialized
        // libxml2 reports some errors (e.g. encoding conversion) only on its generic
        // channel, which prints to stderr; the structured handler below has the facts.
        silenceGenericErrors()
        try XMLAttributeScan.check(bytes)
        // libxml2 takes a NUL for the end of the input and accepts whatever follows it
        // (`<r/>\0<y>garbage`); NUL is no XML character, so the document is refused.
        let nul = bytes.withUnsafeBufferPointer { p -> Int? in
            guard let base = p.baseAddress, let found = memchr(base, 0, p.count) else { return nil }
            return UnsafeRawPointer(base).distance(to: UnsafeRawPointer(found))
        }
        if let nul { throw TranscodeError("a NUL byte at byte \(nul): NUL is not an XML character") }
        let box = Unmanaged.passRetained(sink)
        defer { box.release() }
        guard !bytes.isEmpty else { throw TranscodeError("XML document has no root element (empty body)") }
        try bytes.withUnsafeBufferPointer { (buffer) throws(TranscodeError) in
            // libxml2 reads the body through a callback, a few KiB at a time into a buffer
            // it reuses: the whole-buffer parser copied all of it first (as many bytes
            // again, held for the whole parse), for the same parse time.
            var source = XMLInputSource(next: buffer.baseAddress!, left: buffer.count)
            try withUnsafeMutablePointer(to: &source) { (input) throws(TranscodeError) in
                var handler = sink.saxHandler()
                guard let ctxt = xmlCreateIOParserCtxt(&handler, box.toOpaque(), XMLInputSource.read, nil, input,
                                                       XML_CHAR_ENCODING_NONE) else {
                    throw TranscodeError("XML parser could not be created")
                }
                defer {
                    // libxml2 builds a document of its own for an internal subset's entity
                    // declarations (even under SAX), and freeing the context leaves it to us.
                    if let doc = ctxt.pointee.myDoc {
                        xmlFreeDoc(doc)
                        ctxt.pointee.myDoc = nil
                    }
                    xmlFreeParserCtxt(ctxt)
                }
                sink.parser = ctxt
                let options = XML_PARSE_NONET.rawValue | XML_PARSE_NOENT.rawValue | XML_PARSE_NOERROR.rawValue
                    | XML_PARSE_NOWARNING.rawValue | XML_PARSE_IGNORE_ENC.rawValue
                xmlCtxtUseOptions(ctxt, Int32(options))
                xmlParseDocument(ctxt)
                sink.parser = nil
                if let failure = sink.failure { throw failure }
                guard ctxt.pointee.wellFormed != 0 else { throw TranscodeError("XML is not well-formed") }
            }
        }
    }

    /// libxml2's default generic handler prints to its context FILE (stderr when
    /// unset); it cannot take a no-op Swift handler (the C type is variadic), so the
    /// context becomes /dev/null. The setting is per thread, hence on every parse.
    static func silenceGenericErrors() {
        guard let sink = discard.file else { return }
        xmlSetGenericErrorFunc(sink, nil)
    }

    static let discard = DiscardFile()

    static func makeHandler() -> xmlSAXHandler {
        var h = xmlSAXHandler()
        h.initialized = UInt32(XML_SAX2_MAGIC)
        h.startElementNs = { ctx, localname, prefix, _, nbNamespaces, namespaces, nbAttributes, _, attributes in
            XMLEventSink.with(ctx) { $0.start(XMLStartTag(localname, prefix, nbNamespaces, namespaces, nbAttributes, attributes)) }
        }
        h.endElementNs = { ctx, _, _, _ in XMLEventSink.with(ctx) { $0.end() } }
        h.characters = { ctx, text, length in XMLEventSink.with(ctx) { $0.text(text, length) } }
        h.cdataBlock = { ctx, text, length in XMLEventSink.with(ctx) { $0.text(text, length) } }
        h.getEntity = { _, name in xmlGetPredefinedEntity(name) }
        h.entityDecl = { ctx, name, _, _, _, _ in XMLEventSink.with(ctx) { $0.refuseEntity(name) } }
        h.unparsedEntityDecl = { ctx, name, _, _, _ in XMLEventSink.with(ctx) { $0.refuseEntity(name) } }
        h.reference = { ctx, name in XMLEventSink.with(ctx) { $0.unresolvedReference(name) } }
        h.serror = { ctx, error in XMLEventSink.with(ctx) { $0.libxmlError(error) } }
        return h
    }
}

/// The body as libxml2's input: it copies what it asks for into its own buffer.
struct XMLInputSource {
    var next: UnsafePointer<UInt8>
    var left: Int

    static let read: xmlInputReadCallback = { context, buffer, length in
        let source = context!.assumingMemoryBound(to: XMLInputSource.self)
        let n = min(Int(length), source.pointee.left)
        guard n > 0, let buffer else { return 0 }
        UnsafeMutableRawPointer(buffer).copyMemory(from: source.pointee.next, byteCount: n)
        source.pointee.next += n
        source.pointee.left -= n
        return Int32(n)
    }
}

/// An open `/dev/null` stream, shared for the process's lifetime.
final class DiscardFile: @unchecked Sendable {
    let file: UnsafeMutableRawPointer?
    init() { file = UnsafeMutableRawPointer(fopen("/dev/null", "w")) }
}

/// Receives libxml2 SAX2 events: subclasses override the three event methods. It is the
/// user data libxml2 hands back to every callback, retained for one parse. Pointers are
/// valid only during the call; names are interned in the parser's dictionary, so equal
/// names have equal pointers. A class rather than a protocol: each event is then one
/// virtual call, where an existential added a witness thunk per event.
class XMLEventSink {
    // Read on every callback; only the parsing thread touches these, one call at a time.
    @exclusivity(unchecked) final var parser: xmlParserCtxtPtr?
    @exclusivity(unchecked) final var failure: TranscodeError?

    func startElement(_ element: XMLStartTag) throws(TranscodeError) {}
    func endElement() throws(TranscodeError) {}
    func characters(_ text: UnsafeBufferPointer<UInt8>) {}

    /// The callbacks libxml2 is given; a sink may replace the element and text ones with
    /// callbacks that name its own final class, which saves a virtual call per event.
    func saxHandler() -> xmlSAXHandler { XMLSAXParser.makeHandler() }

    /// Callbacks borrow the sink without a retain/release pair; the parse holds the
    /// +1 for as long as libxml2 can call back.
    @inline(__always)
    static func with(_ raw: UnsafeMutableRawPointer?, _ body: (XMLEventSink) -> Void) {
        with(raw, as: XMLEventSink.self, body)
    }

    @inline(__always)
    static func with<Sink: XMLEventSink>(_ raw: UnsafeMutableRawPointer?, as type: Sink.Type, _ body: (Sink) -> Void) {
        Unmanaged<Sink>.fromOpaque(raw!)._withUnsafeGuaranteedRef(body)
    }

    final func stop(_ error: TranscodeError) {
        if failure == nil { failure = error }
        if let parser { xmlStopParser(parser) }
    }

    final var position: String {
        guard let parser else { return "" }
        return " at line \(xmlSAX2GetLineNumber(parser)), column \(xmlSAX2GetColumnNumber(parser))"
    }

    @inline(__always)
    final func start(_ tag: XMLStartTag) {
        guard failure == nil else { return }
        do { try startElement(tag) } catch { stop(error) }
    }

    @inline(__always)
    final func end() {
        guard failure == nil else { return }
        do { try endElement() } catch { stop(error) }
    }

    final func text(_ bytes: UnsafePointer<UInt8>?, _ length: Int32) {
        guard failure == nil, let bytes, length > 0 else { return }
        characters(UnsafeBufferPointer(start: bytes, count: Int(length)))
    }

    final func refuseEntity(_ name: UnsafePointer<UInt8>?) {
        let shown = name.map { String(cString: $0) } ?? "?"
        stop(TranscodeError("entity declaration '\(shown)' refused (entity declarations are not allowed)\(position)"))
    }

    final func unresolvedReference(_ name: UnsafePointer<UInt8>?) {
        let shown = name.map { String(cString: $0) } ?? "?"
        stop(TranscodeError("reference to undeclared entity '&\(shown);'\(position)"))
    }

    final func libxmlError(_ error: xmlErrorPtr?) {
        guard let e = error?.pointee else { return }
        let undeclaredEntity = e.code == XML_WAR_UNDECLARED_ENTITY.rawValue || e.code == XML_ERR_UNDECLARED_ENTITY.rawValue
        guard e.level.rawValue >= XML_ERR_ERROR.rawValue || undeclaredEntity else { return }
        var message = e.message.map { String(cString: $0) } ?? "XML error \(e.code)"
        while message.last == "\n" || message.last == " " { message.removeLast() }
        stop(TranscodeError("\(message) at line \(e.line), column \(e.int2)"))
    }
}
