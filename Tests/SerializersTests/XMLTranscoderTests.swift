@testable import Serializers
import TestSupport
import Testing

@Suite struct XMLTranscoderTests {
    func xml(_ text: String, _ options: XMLOptions = XMLOptions()) throws -> String {
        try XMLTranscoder.transcode(Array(text.utf8), options: options).text
    }

    func failure(_ bytes: [UInt8]) -> String? {
        do { _ = try XMLTranscoder.transcode(bytes); return nil } catch { return error.description }
    }

    @Test func textAloneBecomesAPlainString() throws {
        #expect(try xml("<a>hello</a>") == #"{"a":"hello"}"#)
    }

    @Test func emptyElementBecomesNull() throws {
        #expect(try xml("<a><b/><c></c><d>  </d></a>") == #"{"a":{"b":null,"c":null,"d":null}}"#)
    }

    @Test func attributesComeFirstWithAtSigns() throws {
        #expect(try xml(#"<a x="1" y="&amp;2"><b>t</b></a>"#) == #"{"a":{"@x":"1","@y":"&2","b":"t"}}"#)
    }

    @Test func textBesideAttributesOrChildrenIsHashText() throws {
        #expect(try xml(##"<a id="7">value</a>"##) == ##"{"a":{"@id":"7","#text":"value"}}"##)
        #expect(try xml("<p>Hi <b>there</b> you</p>") == ##"{"p":{"b":"there","#text":"Hi  you"}}"##)
    }

    @Test func repeatedElementsBecomeArraysAtTheFirstPosition() throws {
        #expect(try xml("<r><i>1</i><x>y</x><i>2</i><i>3</i></r>") == #"{"r":{"i":["1","2","3"],"x":"y"}}"#)
    }

    /// Runs of same-named siblings are kept as one record each; regrouping joins runs.
    @Test func runsAndRegroupingKeepEveryValueInOrder() throws {
        #expect(try xml("<r><a>1</a><a>2</a><b/><a>3</a><a>4</a><b>x</b><c/></r>")
                == #"{"r":{"a":["1","2","3","4"],"b":[null,"x"],"c":null}}"#)
        #expect(try xml("<r><a><i>1</i><i>2</i></a><b/><a><i>3</i></a></r>")
                == #"{"r":{"a":[{"i":["1","2"]},{"i":"3"}],"b":null}}"#)
        #expect(try xml("<r><a>1</a><b/><a>2</a></r>", XMLOptions(forceArray: ["/r/b"]))
                == #"{"r":{"a":["1","2"],"b":[null]}}"#)
        #expect(try xml("<r><b/><a>1</a><b/><b/><a>2</a></r>", XMLOptions(forceArray: ["/r/a"]))
                == #"{"r":{"b":[null,null,null],"a":["1","2"]}}"#)
    }

    /// A name used inside a sibling must not hide a repeat: `c`'s child `a` once overwrote
    /// `r`'s mark for `a`, and `r` came out with two "a" keys (found by fuzz/xml).
    /// The JSON is written into the returned array, sized like the input (at least 64
    /// bytes); JSON longer than that (`<a/>` is 4 bytes, `null,` 5) moves to storage of its
    /// own once, mid-document, and must come out whole.
    @Test func jsonLongerThanItsXMLIsWhole() throws {
        for count in [1, 20, 100, 5_000] {
            let input = "<r>" + String(repeating: "<a/>", count: count) + "</r>"
            let a = count == 1 ? "null" : "[" + Array(repeating: "null", count: count).joined(separator: ",") + "]"
            let json = try xml(input)
            #expect(json == #"{"r":{"a":"# + a + "}}", "\(count) elements")
            #expect((json.utf8.count > max(input.utf8.count, 64)) == (count >= 20))
        }
    }

    @Test func aNameInsideASiblingDoesNotHideARepeat() throws {
        #expect(try xml("<r><a>1</a><c><a>2</a></c><a>3</a></r>") == #"{"r":{"a":["1","3"],"c":{"a":"2"}}}"#)
        #expect(try xml("<r><a>1</a><c><d><a>2</a><b/></d></c><b/><a>3</a></r>")
                == #"{"r":{"a":["1","3"],"c":{"d":{"a":"2","b":null}},"b":null}}"#)
        #expect(try xml("<r><a>1</a><c><a>2</a><a>4</a></c><a>3</a></r>") == #"{"r":{"a":["1","3"],"c":{"a":["2","4"]}}}"#)
    }

    @Test func forceArrayPathsAlwaysGiveArrays() throws {
        let text = try XMLTranscoder.transcode(try Fixture.bytes("xml/single-item.xml"),
                                               options: XMLOptions(forceArray: ["/rss/channel/item"])).text
        #expect(text == #"{"rss":{"@version":"2.0","channel":{"title":"Only","item":[{"title":"Alone"}]}}}"#)
    }

    @Test func allLeafValuesAreStrings() throws {
        #expect(try xml("<n><i>42</i><b>true</b></n>") == #"{"n":{"i":"42","b":"true"}}"#)
    }

    @Test func cdataIsText() throws {
        #expect(try xml("<a><![CDATA[<p> & ]]></a>") == #"{"a":"<p> &"}"#)
    }

    @Test func namespacesKeepPrefixesAndDeclarations() throws {
        let doc = #"<f xmlns:dc="urn:dc" xmlns="urn:d"><dc:c dc:k="v">x</dc:c></f>"#
        #expect(try xml(doc) == ##"{"f":{"@xmlns:dc":"urn:dc","@xmlns":"urn:d","dc:c":{"@dc:k":"v","#text":"x"}}}"##)
        #expect(try xml(doc, XMLOptions(namespaces: .strip)) == ##"{"f":{"c":{"@k":"v","#text":"x"}}}"##)
    }

    @Test func feedFixtureTranscodesWithEveryConvention() throws {
        let value = try XMLTranscoder.transcode(try Fixture.bytes("xml/feed.xml")).value
        let channel = try #require(value["rss"]?["channel"])
        #expect(channel["title"] == .string("Example & Co"))
        #expect(channel["item"]?[0]?["category"] == .array([.string("a"), .string("b")]))
        #expect(channel["item"]?[0]?["dc:creator"] == .string("Ann"))
        #expect(channel["item"]?[1]?["description"] == .string("<p>Hello & welcome</p>"))
        #expect(channel["item"]?[1]?["enclosure"]?["@length"] == .string("123"))
    }

    @Test func prologEncodingIsHonoured() throws {
        #expect(try XMLTranscoder.transcode(try Fixture.bytes("xml/latin1.xml")).text == #"{"note":"café"}"#)
    }

    @Test func escapesControlCharactersFromCharacterReferences() throws {
        #expect(try xml("<a>x&#9;y&#10;z\"</a>") == #"{"a":"x\ty\nz\""}"#)
    }

    @Test func billionLaughsIsRefusedAtTheFirstEntityDeclaration() throws {
        let message = try #require(failure(try Fixture.bytes("xml/billion-laughs.xml")))
        #expect(message.contains("entity declaration 'lol' refused"))
        #expect(message.contains("line 3"))
    }

    @Test func externalEntitiesAreRefusedAndNothingIsRead() throws {
        let message = try #require(failure(try Fixture.bytes("xml/external-entity.xml")))
        #expect(message.contains("entity declaration 'xxe' refused"))
    }

    @Test func externalDTDIsToleratedButNeverLoaded() throws {
        #expect(try XMLTranscoder.transcode(try Fixture.bytes("xml/external-dtd.xml")).text == #"{"note":{"to":"Tove"}}"#)
    }

    @Test(arguments: ["<a><b></a>", "<a>", "", "not xml", "<a x='1' x='2'/>", "<a>&nope;</a>", "<a></a><b/>"])
    func malformedXMLFailsWithALocation(input: String) throws {
        let message = try #require(failure(Array(input.utf8)))
        #expect(message.contains("line") || message.contains("root element") || message.contains("well-formed"), "\(message)")
    }

    @Test func invalidUTF8IsRefusedNotMangled() throws {
        #expect(failure(Array("<a>".utf8) + [0xFF, 0xFE] + Array("</a>".utf8)) != nil)
    }

    @Test func depthLimitFromSettingsApplies() throws {
        let s = try makeSerializer("xml", ["max_json_depth=3"])
        #expect(s.serialize(response(200, "text/xml", "<a><b><c/></b></a>")).succeeded)
        let deep = s.serialize(response(200, "text/xml", "<a><b><c><d/></c></b></a>"))
        #expect(deep.error?.detail?.contains("elements nested deeper than the limit of 3") == true)
    }

    @Test func excessiveDepthFails() throws {
        let deep = Array((String(repeating: "<a>", count: 100_000) + String(repeating: "</a>", count: 100_000)).utf8)
        let message = failure(deep) ?? "no failure"
        // libxml2's own limit (256 elements) or ours (max_json_depth), whichever is lower.
        #expect(message.contains("Excessive depth in document: 256") || message.contains("nested deeper than the limit"), "\(message)")
    }
}

@Suite struct XMLCharsetTests {
    @Test func wrongDeclaredEncodingFailsInsteadOfMangling() throws {
        let body = Array("<?xml version=\"1.0\" encoding=\"UTF-8\"?><a>caf".utf8) + [0xE9] + Array("</a>".utf8)
        let result = try makeSerializer("xml").serialize(UpstreamResponse(status: 200, contentType: "text/xml", body: body))
        #expect(result.error?.code == 3840)
        #expect(result.value == nil)
    }

    @Test func utf16DocumentWithBOMIsRead() throws {
        var body: [UInt8] = [0xFF, 0xFE]
        for unit in "<?xml version=\"1.0\" encoding=\"UTF-16\"?><a>é😀</a>".utf16 { body += [UInt8(unit & 0xFF), UInt8(unit >> 8)] }
        #expect(try XMLTranscoder.transcode(body).text == #"{"a":"é😀"}"#)
    }
}

/// Bounded work (DESIGN §5): libxml2's per-element attribute check is quadratic, so
/// elements with more than 256 attributes are refused before it runs.
@Suite struct XMLAttributeBoundTests {
    func element(attributes: Int) -> [UInt8] {
        Array(("<r " + (0..<attributes).map { "a\($0)=\"1\"" }.joined(separator: " ") + "/>").utf8)
    }

    @Test func anElementWithTheLimitsAttributesTranscodes() throws {
        let json = try XMLTranscoder.transcode(element(attributes: 256), options: XMLOptions())
        #expect(json.text.hasPrefix(#"{"r":{"@a0":"1","@a1":"1""#))
    }

    @Test func aWiderElementIsRefusedWithItsPosition() {
        for count in [257, 100_000] {
            do throws(TranscodeError) {
                _ = try XMLTranscoder.transcode(Array("<?xml version=\"1.0\"?>".utf8) + element(attributes: count), options: XMLOptions())
                Issue.record("\(count) attributes were accepted")
            } catch {
                #expect(error.description.contains("the element starting at byte 21 has more than 256 attributes"), "\(error)")
            }
        }
    }

    @Test func equalsSignsOutsideStartTagsDoNotCount() throws {
        let many = String(repeating: "x=1 ", count: 400)
        let doc = "<!DOCTYPE r [<!ELEMENT r ANY>]><?pi \(many)?><r a=\"\(many)\" b='\(many)'><!-- \(many) --><![CDATA[\(many)]]>\(many) &gt; <s c=\"1\"/></r>"
        #expect(try XMLTranscoder.transcode(Array(doc.utf8), options: XMLOptions()).text.contains(#""@a":"#))
    }
}

/// Every body is UTF-8 by the time the attribute pre-scan and libxml2 read it (XMLEncoding).
@Suite struct XMLEncodingTests {
    func utf16LE(_ text: String, bom: Bool = true) -> [UInt8] {
        var bytes: [UInt8] = bom ? [0xFF, 0xFE] : []
        for unit in text.utf16 { bytes += [UInt8(unit & 0xFF), UInt8(unit >> 8)] }
        return bytes
    }

    func transcoded(_ bytes: [UInt8]) -> String {
        do { return try XMLTranscoder.transcode(bytes).text } catch { return "error: \(error.description)" }
    }

    @Test func declaredAndDetectedEncodingsAreReadAsTheirCharacters() {
        let latin1 = Array(#"<?xml version="1.0" encoding="ISO-8859-1"?><a>caf"#.utf8) + [0xE9] + Array("</a>".utf8)
        #expect(transcoded(latin1) == #"{"a":"café"}"#)
        let cp1252 = [0xEF, 0xBB, 0xBF] + Array(#"<?xml version="1.0" encoding="windows-1252"?><a>"#.utf8) + [0x80] + Array("</a>".utf8)
        #expect(transcoded(cp1252) == #"{"a":"€"}"#)
        var utf16BE: [UInt8] = [0xFE, 0xFF]
        for unit in #"<a x="é">😀</a>"#.utf16 { utf16BE += [UInt8(unit >> 8), UInt8(unit & 0xFF)] }
        #expect(transcoded(utf16BE) == ##"{"a":{"@x":"é","#text":"😀"}}"##)
        // `<?xm` in EBCDIC code page 037, declaring it.
        let ebcdic: [UInt8] = [0x4C, 0x6F, 0xA7, 0x94, 0x93, 0x40, 0xA5, 0x85, 0x99, 0xA2, 0x89, 0x96, 0x95, 0x7E, 0x7F, 0xF1,
                               0x4B, 0xF0, 0x7F, 0x40, 0x85, 0x95, 0x83, 0x96, 0x84, 0x89, 0x95, 0x87, 0x7E, 0x7F, 0xC9, 0xC2,
                               0xD4, 0xF0, 0xF3, 0xF7, 0x7F, 0x6F, 0x6E, 0x4C, 0x81, 0x6E, 0x83, 0x81, 0x86, 0x51, 0x4C, 0x61,
                               0x81, 0x6E]
        #expect(transcoded(ebcdic) == #"{"a":"café"}"#)
        // A wide encoding declared in single bytes is a mislabel: read as UTF-8.
        #expect(transcoded(Array(#"<?xml version="1.0" encoding="UTF-16"?><a>x</a>"#.utf8)) == #"{"a":"x"}"#)
    }

    @Test func unknownAndBrokenEncodingsAreRefusedWithTheReason() {
        #expect(transcoded(Array(#"<?xml version="1.0" encoding="X-NOPE"?><a/>"#.utf8)) == "error: XML encoding 'X-NOPE' is not supported")
        #expect(transcoded(Array(#"<?xml version="1.0" encoding="../gconv"?><a/>"#.utf8)) == "error: XML encoding '../gconv' is not supported")
        #expect(transcoded(utf16LE("<a>x</a>") + [0x00, 0xD8]) == "error: XML is not valid UTF-16LE at byte 18")
    }

    /// `㸀` is 00 3E in UTF-16LE: read as bytes, every name ended the tag the scan saw.
    @Test func aWideElementInUTF16IsRefusedLikeOneInUTF8() {
        let tag = "<r " + (0..<1_000).map { "\u{3E00}\($0)=\"1\"" }.joined(separator: " ") + "/>"
        #expect(transcoded(utf16LE(tag)) == "error: the element starting at byte 0 has more than 256 attributes")
        #expect(transcoded(utf16LE(tag, bom: false)) == "error: the element starting at byte 0 has more than 256 attributes")
    }

    /// The sixteen-bytes-a-step gap check agrees with the obvious byte loop, at every
    /// alignment and around the threshold.
    @Test func theGapCheckAgreesWithAByteLoop() {
        func naive(_ b: [UInt8], _ length: Int) -> Bool {
            var last = -1
            for (i, c) in b.enumerated() where c == 0x3C {
                if last >= 0 && i - last > length { return true }
                last = i
            }
            return last >= 0 && b.count - last > length
        }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<3_000 {
            let count = Int.random(in: 0..<200, using: &generator)
            let density = Int.random(in: 1...40, using: &generator)
            let bytes = (0..<count).map { _ in Int.random(in: 0..<density, using: &generator) == 0 ? UInt8(0x3C) : UInt8.random(in: 0...255, using: &generator) }
            let length = Int.random(in: 16...40, using: &generator)
            #expect(XMLAttributeScan.hasGap(bytes, longerThan: length) == naive(bytes, length), "\(bytes) \(length)")
        }
    }
}

/// DESIGN §5: an object serializerd builds never repeats a member, and nothing but
/// whitespace, comments and processing instructions follows the root.
@Suite struct XMLObjectKeysTests {
    let strip = XMLOptions(namespaces: .strip)

    func xml(_ text: String, _ options: XMLOptions) throws -> String {
        try XMLTranscoder.transcode(Array(text.utf8), options: options).text
    }

    @Test func attributesThatCollideAfterStrippingAreGroupedInDocumentOrder() throws {
        #expect(try xml(#"<r xmlns:p="u1" xmlns:q="u2" p:x="1" q:x="2"/>"#, strip) == #"{"r":{"@x":["1","2"]}}"#)
        #expect(try xml(#"<r xmlns:p="u1" xmlns:q="u2" y="0" p:x="1" q:y="2" x="3" z="4"><a/></r>"#, strip)
                == #"{"r":{"@y":["0","2"],"@x":["1","3"],"@z":"4","a":null}}"#)
        // Kept prefixes do not collide; neither do distinct names when stripped.
        #expect(try xml(#"<r xmlns:p="u1" xmlns:q="u2" p:x="1" q:x="2"/>"#, XMLOptions())
                == #"{"r":{"@xmlns:p":"u1","@xmlns:q":"u2","@p:x":"1","@q:x":"2"}}"#)
        #expect(try xml(#"<r xmlns:p="u1" p:x="1" y="2"/>"#, strip) == #"{"r":{"@x":"1","@y":"2"}}"#)
    }

    @Test func elementsThatCollideAfterStrippingAreSiblingsOfOneName() throws {
        #expect(try xml(#"<r xmlns:p="u1" xmlns:q="u2"><p:a>1</p:a><b/><q:a>2</q:a><a>3</a></r>"#, strip)
                == #"{"r":{"a":["1","2","3"],"b":null}}"#)
    }

    @Test func aNulByteAnywhereIsRefused() throws {
        for text in ["<r>x</r>\0<y>garbage", "<r>x</r>\0", "<r>x\0</r>", "<?xml version=\"1.0\"?>\0<r/>"] {
            #expect(throws: TranscodeError.self, "\(text.debugDescription)") { try xml(text, XMLOptions()) }
        }
        // What may follow the root still does.
        #expect(try xml("<r>x</r> <!-- c --> <?pi x?>\n", XMLOptions()) == #"{"r":"x"}"#)
        #expect(throws: TranscodeError.self) { try xml("<r>x</r>garbage", XMLOptions()) }
    }
}
