import HTTPCore
import Testing

@Suite struct MediaTypeTests {
    @Test func parsesTypeSubtypeAndParametersIgnoringCase() throws {
        let media = try #require(MediaType("Application/JSON; Charset=\"UTF-8\" ; q=1"))
        #expect(media.essence == "application/json")
        #expect(media.charset == "utf-8")
        #expect(media.parameters["q"] == "1")
    }

    @Test func rejectsValuesWithoutTypeAndSubtype() {
        #expect(MediaType("json") == nil)
        #expect(MediaType("") == nil)
        #expect(MediaType("a/b/c") == nil)
        #expect(MediaType("/json") == nil)
    }

    @Test func reportsStructuredSyntaxSuffix() {
        #expect(MediaType("application/vnd.api+json")?.suffix == "json")
        #expect(MediaType("application/json")?.suffix == nil)
    }

    @Test func rangesMatchExactWildcardAndSuffix() throws {
        let problem = try #require(MediaType("application/problem+json"))
        #expect(MediaRange("*/*")!.matches(problem))
        #expect(MediaRange("application/*")!.matches(problem))
        #expect(MediaRange("*/*+json")!.matches(problem))
        #expect(!MediaRange("*/*+xml")!.matches(problem))
        #expect(!MediaRange("text/*")!.matches(problem))
        #expect(MediaRange("APPLICATION/PROBLEM+JSON")!.matches(problem))
        #expect(MediaRange("*/json") == nil)
    }

    @Test func reasonPhrasesAreLowercaseLikeFoundation() {
        #expect(HTTPStatus.reasonPhrase(404) == "not found")
        #expect(HTTPStatus.reasonPhrase(500) == "internal server error")
        #expect(HTTPStatus.reasonPhrase(599) == "server error")
    }
}
