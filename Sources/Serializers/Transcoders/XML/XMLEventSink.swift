internal import CLibxml2
#if canImport(Glibc)
import Glibc
#endif

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
