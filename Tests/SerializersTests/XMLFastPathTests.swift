@testable import Serializers
import TestSupport
import Testing

/// The XML fast path (XMLFastScanner) against libxml2 through the same JSON builder: what
/// it takes it must transcode exactly as libxml2 does, and what it leaves, libxml2 decides.
@Suite struct XMLFastPathTests {
    /// Whether the fast path takes `text` whole (false: it leaves the body to libxml2).
    func takes(_ bytes: [UInt8], _ options: XMLOptions = XMLOptions(), maxDepth: Int = 1000) throws -> Bool {
        let memory = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: bytes.count + 64)
        defer { memory.deallocate() }
        let sink = XMLJSONBuilder(options: options, output: memory, maxDepth: maxDepth, budget: OutputBudget(input: bytes.count))
        return try XMLTranscoder.scan(bytes, into: sink)
    }

    func outcome(_ bytes: [UInt8], _ options: XMLOptions, maxDepth: Int = 1000, fastPath: Bool) -> String {
        do {
            return try XMLTranscoder.transcode(bytes, options: options, maxDepth: maxDepth, fastPath: fastPath).text
        } catch {
            return "error: \(error)"
        }
    }

    /// Both namespace conventions give libxml2's outcome, JSON or error.
    func expectSameAsLibxml2(_ bytes: [UInt8], _ note: String, maxDepth: Int = 1000) {
        for namespaces in [XMLOptions.Namespaces.keep, .strip] {
            var options = XMLOptions()
            options.namespaces = namespaces
            let expected = outcome(bytes, options, maxDepth: maxDepth, fastPath: false)
            #expect(outcome(bytes, options, maxDepth: maxDepth, fastPath: true) == expected, "\(note) (\(namespaces))")
        }
    }

    static let taken: [String] = [
        "<a/>",
        "\u{FEFF}<?xml version='1.0'?><a>x</a>",
        #"<?xml version="1.0" encoding="ISO-8859-1" standalone="no" ?><a/>"#,
        "<!-- before --><a b = 'one' c=\"t'wo\" ><c/>x<c>y</c></a ><!-- after -->\n",
        #"<r xmlns="urn:a" xmlns:x="urn:x"><x:n xmlns="urn:a" x:k="1">t</x:n><m xmlns=""/></r>"#,
        #"<r xml:lang="en"><xml:t>s</xml:t></r>"#,
        "<r a=\"l1\r\nl2\tl3\nl4\rl5\" b=\"&#10;&#x9;&lt;&amp;&quot;&apos;&gt;\">\r\n t\r\nu\rv \r</r>",
        "<r><![CDATA[<b>&\r\nx]]]]><![CDATA[]]>]</r>",
        "<r>caf\u{E9} \u{2713} \u{1F600} a]b ]] c&#x1F600;&#233;&#0000065;</r>",
        "<r><a/><b/><a/><!----><c>1</c><c>2</c></r>",
        "<r>lead<i>x</i>mid<i>y</i>tail</r>",
        "<?xml version='1.0'?><?xml-stylesheet href='s.xsl' type='text/xsl'?><r><?php echo '<a>'; ?>x<?p?></r><?done \u{E9}?>",
        String(repeating: "<d>", count: 256) + String(repeating: "</d>", count: 256),
    ]

    @Test(arguments: taken)
    func takesCommonDocumentsAndMatchesLibxml2(_ text: String) throws {
        let bytes = Array(text.utf8)
        #expect(try takes(bytes), "left to libxml2: \(text.prefix(80))")
        expectSameAsLibxml2(bytes, String(text.prefix(80)))
    }

    @Test func takesTheFixturesWithoutADoctype() throws {
        for name in ["feed.xml", "single-item.xml"] {
            let bytes = try Fixture.bytes("xml/\(name)")
            #expect(try takes(bytes), "\(name)")
            expectSameAsLibxml2(bytes, name)
        }
    }

    static let left: [(String, String)] = [
        ("a DOCTYPE", "<!DOCTYPE a><a/>"),
        ("a PI named xml", "<a><?xml x?></a>"),
        ("a PI named XmL", "<?XmL?><a/>"),
        ("a PI target with a colon", "<a><?p:q x?></a>"),
        ("a PI without space after its target", "<a><?p?x?></a>"),
        ("a declaration without its space", "<?xml?><a/>"),
        ("version 1.1", "<?xml version='1.1'?><a/>"),
        ("a declaration not first", " <?xml version='1.0'?><a/>"),
        ("a non-ASCII name", "<caf\u{E9}/>"),
        ("an unbound prefix", "<p:a/>"),
        ("an unbound attribute prefix", "<a p:b='1'/>"),
        ("a duplicate attribute", "<a b='1' b='2'/>"),
        ("one local name twice", "<a xmlns:p='urn:p' xmlns:q='urn:p' p:b='1' q:b='2'/>"),
        ("an empty prefixed namespace", "<a xmlns:p=''/>"),
        ("a namespace name that is no URI", "<a xmlns:p=':x'/>"),
        ("xmlns:xml", "<a xmlns:xml='http://www.w3.org/XML/1998/namespace'/>"),
        ("a second colon", "<a:b:c xmlns:a='urn:a'/>"),
        ("]]> in text", "<a>x]]>y</a>"),
        ("an undeclared entity", "<a>&nbsp;</a>"),
        ("a reference to no character", "<a>&#0;</a>"),
        ("a reference past Unicode", "<a>&#x110000;</a>"),
        ("nine hex digits", "<a>&#x000000041;</a>"),
        ("< in a value", "<a b='<'/>"),
        ("a control character", "<a>\u{1}</a>"),
        ("-- in a comment", "<a><!-- a -- b --></a>"),
        ("text after the root", "<a/>x"),
        ("a second root", "<a/><b/>"),
        ("a mismatched end tag", "<a></b>"),
        ("an end tag longer than its start", "<a></ab>"),
        ("no whitespace between attributes", "<a b='1'c='2'/>"),
        ("an unclosed element", "<a>"),
        ("no root", "<!-- only -->"),
        ("257 levels", String(repeating: "<d>", count: 257) + String(repeating: "</d>", count: 257)),
        ("258 levels", String(repeating: "<d>", count: 258) + String(repeating: "</d>", count: 258)),
    ]

    @Test(arguments: left)
    func leavesTheRestToLibxml2(_ note: String, _ text: String) throws {
        let bytes = Array(text.utf8)
        #expect(try !takes(bytes), "taken: \(note)")
        expectSameAsLibxml2(bytes, note)
    }

    @Test func leavesMalformedUTF8AndNoncharactersToLibxml2() throws {
        for bytes: [UInt8] in [[0xC3], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xEF, 0xBF, 0xBE], [0xF4, 0x90, 0x80, 0x80]] {
            let document = Array("<a>".utf8) + bytes + Array("</a>".utf8)
            #expect(try !takes(document), "\(bytes)")
            expectSameAsLibxml2(document, "\(bytes)")
        }
    }

    @Test func leavesMoreThan256AttributesToTheLibxml2Path() throws {
        let attributes = (0..<257).map { " a\($0)='v'" }.joined()
        let bytes = Array("<r\(attributes)/>".utf8)
        #expect(try !takes(bytes))
        expectSameAsLibxml2(bytes, "257 attributes")
        #expect(outcome(bytes, XMLOptions(), fastPath: true).contains("more than 256 attributes"))
    }

    /// Runs near libxml2's 10^7-byte limits (attribute values, CDATA sections, comments,
    /// processing instructions) are its to judge: over the limit it refuses all but the
    /// comment; the fast path leaves every such run over 9×10^6 bytes to it.
    @Test func longRunsAreLeftToLibxml2() throws {
        let run = String(repeating: "x", count: 10_000_100)
        for (note, text) in [("a value", "<a b='\(run)'/>"), ("CDATA", "<a><![CDATA[\(run)]]></a>"),
                             ("a comment", "<a><!--\(run)--></a>"), ("a PI", "<a><?p \(run)?></a>")] {
            let bytes = Array(text.utf8)
            #expect(try !takes(bytes), "\(note)")
            // One namespace convention: these documents have no prefixes, and each parse of
            // 10 MB is slow in a debug build.
            let expected = outcome(bytes, XMLOptions(), fastPath: false)
            #expect(outcome(bytes, XMLOptions(), fastPath: true) == expected, "\(note)")
            #expect(expected.hasPrefix("error:") == (note != "a comment"), "\(note): \(expected.prefix(80))")
        }
        #expect(try takes(Array("<a><![CDATA[\(run.prefix(8_000_000))]]></a>".utf8)))
    }

    /// The builder's own refusals come through as they are, not as a second parse.
    @Test func theBuildersLimitsApplyOnTheFastPath() throws {
        let deep = Array((String(repeating: "<d>", count: 70) + String(repeating: "</d>", count: 70)).utf8)
        #expect(throws: TranscodeError.self) { try takes(deep, maxDepth: 64) }
        #expect(outcome(deep, XMLOptions(), maxDepth: 64, fastPath: true).contains("deeper than the limit of 64"))
        expectSameAsLibxml2(deep, "70 levels", maxDepth: 64)
    }

    /// Names built to share a hash slot would make each lookup walk all of them; past 64
    /// slots the fast path gives up, and libxml2 (randomized hashing) parses the body.
    @Test func collidingNamesGoToLibxml2() throws {
        var colliding: [String] = []
        var k = 0
        while colliding.count < 80 {
            let name = "n\(k)"
            var hash = XMLNameInterner.seed
            for c in name.utf8 { hash = XMLNameInterner.mix(hash, c) }
            if hash & 255 == 7 { colliding.append(name) }
            k += 1
        }
        let bytes = Array(("<r>" + colliding.map { "<\($0)/>" }.joined() + "</r>").utf8)
        #expect(try !takes(bytes))
        expectSameAsLibxml2(bytes, "colliding names")
        // Fewer of them are still taken.
        let few = Array(("<r>" + colliding.prefix(20).map { "<\($0)/>" }.joined() + "</r>").utf8)
        #expect(try takes(few))
    }
}
