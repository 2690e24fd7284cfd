@testable import Serializers
import TestSupport
import Testing

/// Bounded fuzzing: random, truncated and bit-flipped bodies through every serializer.
/// Passing means no crash, no hang (the time limit), and a result that is either a
/// value (valid JSON) or an error — never both missing.
@Suite(.timeLimit(.minutes(5)))
struct FuzzTests {
    static let seeds: [(String, String)] = [
        ("json/af-null-removal.json", "application/json"), ("xml/feed.xml", "text/xml"),
        ("plist/sample.plist", "application/x-plist"), ("plist/sample.bplist", "application/x-plist"),
        ("images/sample.png", "image/png"), ("images/sample.jpg", "image/jpeg"), ("images/sample.gif", "image/gif"),
        ("images/sample-le.tiff", "image/tiff"), ("images/sample.ico", "image/x-icon"),
        ("images/sample-lossy.webp", "image/webp"), ("images/sample.bmp", "image/bmp"),
    ]

    func check(_ serializer: any ResponseSerializer, _ body: [UInt8], _ type: String) {
        let result = serializer.serialize(UpstreamResponse(status: 200, contentType: type, body: body))
        if let value = result.value {
            #expect((try? JSONNormalizer.normalize(value.bytes)) == value.bytes, "serializer produced invalid JSON")
        } else {
            #expect(result.error != nil)
        }
    }

    @Test(arguments: ["json", "xml", "plist", "image", "form", "text", "raw"])
    func mutatedSeedsNeverCrash(name: String) throws {
        let serializer = try makeSerializer(name, ["acceptable_content_types=null"])
        var rng = SplitMix(state: 0x5EED ^ UInt64(name.utf8.count))
        for (file, type) in Self.seeds {
            let seed = try Fixture.bytes(file)
            for cut in stride(from: 0, through: seed.count, by: max(1, seed.count / 40)) {
                check(serializer, Array(seed.prefix(cut)), type)
            }
            for _ in 0..<150 {
                var body = seed
                for _ in 0..<(1 + rng.below(4)) where !body.isEmpty {
                    let at = rng.below(body.count)
                    switch rng.below(3) {
                    case 0: body[at] ^= UInt8(1 << rng.below(8))
                    case 1: body[at] = UInt8(truncatingIfNeeded: rng.next())
                    default: body.insert(UInt8(truncatingIfNeeded: rng.next()), at: at)
                    }
                }
                check(serializer, body, type)
            }
        }
    }

    @Test(arguments: ["json", "xml", "plist", "image", "form", "text", "raw"])
    func randomBytesNeverCrash(name: String) throws {
        let serializer = try makeSerializer(name, ["acceptable_content_types=null"])
        var rng = SplitMix(state: 42)
        let alphabet = Array("{}[]\",:0123456789.eE+-tfn\\u<>/=&?![CDATA]xmlplistbplist00 \n".utf8)
        for round in 0..<600 {
            let length = rng.below(200)
            let body = (0..<length).map { _ in
                round % 2 == 0 ? UInt8(truncatingIfNeeded: rng.next()) : alphabet[rng.below(alphabet.count)]
            }
            check(serializer, body, "application/octet-stream")
        }
    }

    @Test func deepNestingInEveryTextFormatFailsCleanly() throws {
        let json = try makeSerializer("json")
        let deep = Array(repeating: UInt8(ascii: "["), count: 100_000)
        let arrayCode = json.serialize(UpstreamResponse(status: 200, contentType: "application/json", body: deep)).error?.code
        #expect(arrayCode == 3840)
        let deepObject = Array(String(repeating: "{\"a\":", count: 50_000).utf8)
        let objectCode = json.serialize(UpstreamResponse(status: 200, contentType: "application/json", body: deepObject)).error?.code
        #expect(objectCode == 3840)
        let plist = try makeSerializer("plist")
        let nested = "<plist>" + String(repeating: "<array>", count: 5_000) + String(repeating: "</array>", count: 5_000) + "</plist>"
        let plistError = plist.serialize(response(200, "application/x-plist", nested)).error
        #expect(plistError?.code == 3840)
        #expect(plistError?.detail?.contains("depth") == true || plistError?.detail?.contains("nesting deeper") == true)
    }
}
