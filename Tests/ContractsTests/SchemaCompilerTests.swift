@testable import Contracts
import Serializers
import Testing

@Suite(.timeLimit(.minutes(5))) struct SchemaCompilerTests {
    func schema(_ text: String) throws -> Schema {
        try SchemaCompiler.compile(try JSONValue.parse(text))
    }

    func json(_ text: String) throws -> JSONValue { try JSONValue.parse(text) }

    @Test func numbersCompareByTheirExactValue() throws {
        #expect(ExactNumber("1.0") == ExactNumber("1"))
        #expect(ExactNumber("1e2") == ExactNumber("100.00"))
        #expect(ExactNumber("9007199254740993")! > ExactNumber("9007199254740992")!)
        #expect(ExactNumber("-0.5")! < ExactNumber("-0.25")!)
        #expect(ExactNumber("-0") == ExactNumber("0.0e5"))
        #expect(ExactNumber("1e99999999999999999999")! > ExactNumber("1e999")!)
        let bounded = try schema(#"{"maximum": 9007199254740992}"#)
        #expect(bounded.accepts(.number("9007199254740992")))
        #expect(!bounded.accepts(.number("9007199254740993")))
    }

    @Test func multipleOfIsExactAndBounded() throws {
        #expect(ExactNumber("0.3")!.isMultiple(of: ExactNumber("0.1")!) == true)
        #expect(ExactNumber("0.35")!.isMultiple(of: ExactNumber("0.1")!) == false)
        #expect(ExactNumber("1e308")!.isMultiple(of: ExactNumber("1e-308")!) == true)
        #expect(ExactNumber("3e-308")!.isMultiple(of: ExactNumber("1e-308")!) == true)
        #expect(ExactNumber("1e-309")!.isMultiple(of: ExactNumber("1e-308")!) == false)
        #expect(ExactNumber("12345678901234567890123")!.isMultiple(of: ExactNumber("3")!) == true)
        #expect(ExactNumber("7e999999999999")!.isMultiple(of: ExactNumber("14")!) == true)
        #expect(ExactNumber("7e-999999999999")!.isMultiple(of: ExactNumber("14")!) == false)
        #expect(ExactNumber(String(repeating: "7", count: 1_001))!.isMultiple(of: ExactNumber("7")!) == nil)
        let tiny = try schema(#"{"multipleOf": 1e-308}"#)
        #expect(tiny.accepts(.number("0.5")))
        #expect(tiny.validate(.number("1" + String(repeating: "1", count: 2_000))).first?.keyword == "multipleOf")
    }

    @Test func aViolationNamesItsPointerKeywordAndSchemaLocation() throws {
        let orders = try schema(#"{"type": "object", "properties": {"items": {"type": "array", "items": {"required": ["id"], "properties": {"id": {"type": "integer"}}}}}}"#)
        let violations = orders.validate(try json(#"{"items": [{"id": 1}, {"id": "2"}, {}]}"#))
        #expect(violations.map(\.pointer) == ["/items/1/id", "/items/2"])
        #expect(violations.map(\.keyword) == ["type", "required"])
        #expect(violations[0].schemaLocation == "urn:serializerd:contract#/properties/items/items/properties/id/type")
        #expect(violations[1].message == "lacks id")
        // At most `limit` of them.
        let many = try json("[" + Array(repeating: "\"x\"", count: 50).joined(separator: ",") + "]")
        #expect(try schema(#"{"items": {"type": "integer"}}"#).validate(many).count == 20)
    }

    @Test func openAPINullableAddsNull() throws {
        let nullable = try schema(#"{"type": "string", "nullable": true}"#)
        #expect(nullable.accepts(.null) && nullable.accepts(.string("a")) && !nullable.accepts(.number("1")))
        #expect(!(try schema(#"{"type": "string", "nullable": false}"#)).accepts(.null))
    }

    @Test func unknownKeywordsAndBadOperandsAreErrorsWithTheirLocation() throws {
        for (text, location) in [(#"{"properties": {"a": {"minimun": 1}}}"#, "#/properties/a/minimun"),
                                 (##"{"$dynamicRef": "#x"}"##, "#/$dynamicRef"),
                                 (#"{"minItems": -1}"#, "#/minItems"),
                                 (#"{"multipleOf": 0}"#, "#/multipleOf"),
                                 (#"{"type": "float"}"#, "#/type"),
                                 (#"{"pattern": "(a)\\1"}"#, "#/pattern"),
                                 (##"{"$ref": "#/$defs/missing"}"##, "#/$defs/missing")] {
            #expect(throws: SchemaError.self, "\(text)") { try schema(text) }
            do { _ = try schema(text) } catch let error as SchemaError { #expect(error.location.hasSuffix(location), "\(error)") }
        }
    }

    @Test func hostileSchemasAreRefusedOrStayLinear() throws {
        // A $ref cycle that never moves into the instance.
        #expect(throws: SchemaError.self) { try schema(##"{"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"allOf": [{"$ref": "#/$defs/a"}]}}, "$ref": "#/$defs/a"}"##) }
        #expect(throws: SchemaError.self) { try schema(##"{"$ref": "#"}"##) }
        // Recursion that does move into the instance is fine.
        #expect(try schema(##"{"items": {"$ref": "#"}}"##).accepts(try json("[[[[]]]]")))
        // 10,000 nested allOf: deeper than the compiler takes.
        var nested = JSONValue.bool(true)
        for _ in 0..<10_000 { nested = .object([("allOf", .array([nested]))]) }
        #expect(throws: SchemaError.self) { try SchemaCompiler.compile(nested) }
        // Catastrophic backtracking shape against 100 KB: RE2 runs it in linear time.
        let pattern = try schema(#"{"pattern": "^(a+)+$"}"#)
        #expect(!pattern.accepts(.string(String(repeating: "a", count: 100_000) + "!")))
        #expect(pattern.accepts(.string(String(repeating: "a", count: 100_000))))
        // uniqueItems over 100,000 items hashes them.
        let unique = try schema(#"{"uniqueItems": true}"#)
        let distinct = JSONValue.array((0..<100_000).map { .number(String($0)) })
        #expect(unique.accepts(distinct))
        #expect(!unique.accepts(.array((0..<100_000).map { .number(String($0 % 99_999)) })))
        #expect(!unique.accepts(.array([.number("1"), .number("1.0")])))
        // A 1,000-way oneOf where every branch runs.
        let branches = (0..<1_000).map { #"{"const": \#($0)}"# }.joined(separator: ",")
        let oneOf = try schema(#"{"oneOf": [\#(branches)]}"#)
        #expect(oneOf.accepts(.number("999")) && !oneOf.accepts(.number("1000")))
    }

    @Test func refsReachDefsAnchorsAndOtherDocuments() throws {
        let files = ["file:///etc/serializerd/contracts/shared.json": #"{"$defs": {"id": {"type": "integer", "minimum": 1}}}"#]
        let compiled = try SchemaCompiler.compile(try json(##"{"properties": {"a": {"$ref": "#pos"}, "b": {"$ref": "shared.json#/$defs/id"}}, "$defs": {"p": {"$anchor": "pos", "exclusiveMinimum": 0}}}"##),
                                                  uri: "file:///etc/serializerd/contracts/main.json") { uri in files[uri].flatMap { try? JSONValue.parse($0) } }
        #expect(compiled.accepts(try json(#"{"a": 1, "b": 2}"#)))
        #expect(compiled.validate(try json(#"{"a": 0, "b": 0}"#)).map(\.keyword) == ["exclusiveMinimum", "minimum"])
    }
}
