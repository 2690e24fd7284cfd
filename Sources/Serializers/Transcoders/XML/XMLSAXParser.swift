internal import CLibxml2
#if canImport(Glibc)
import Glibc
#endif


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
