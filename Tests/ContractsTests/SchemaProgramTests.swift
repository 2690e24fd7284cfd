@testable import Contracts
import Serializers
import Testing

/// The one-pass walk over normalized bytes (DESIGN §10): what it decides itself, what it
/// leaves to the tree, and that it never vouches for an answer the tree refuses.
@Suite struct SchemaProgramTests {
    func schema(_ text: String) throws -> Schema {
        try SchemaCompiler.compile(try JSONValue.parse(Array(text.utf8)))
    }

    /// The walk's verdict, checked against the tree's on the same bytes.
    func walk(_ schema: Schema, _ instance: String) throws -> Bool? {
        let bytes = Array(instance.utf8)
        let tree = schema.validate(try JSONValue.parse(bytes, options: JSONReadOptions(allowFragments: true))).isEmpty
        let walked = schema.walk(json: bytes)
        if let walked { #expect(walked == tree, "walk \(walked), tree \(tree): \(instance)") }
        #expect(schema.validate(json: bytes, maxDepth: 64).isEmpty == tree, "\(instance)")
        if let checked = schema.checkedWhileNormalizing(bytes) {
            #expect(checked.valid == tree && checked.sameOutput, "normalizer's check \(checked), tree \(tree): \(instance)")
        }
        return walked
    }

    static let order = #"""
        {"type":"object","required":["id","lines"],"additionalProperties":false,
         "properties":{"id":{"type":"integer"},"note":{"type":["string","null"],"maxLength":4},
                       "lines":{"type":"array","maxItems":3,"items":{"$ref":"#/$defs/line"}}},
         "$defs":{"line":{"type":"object","properties":{"sku":{"type":"string","pattern":"^[a-z]+$"},
                                                        "qty":{"type":"number","minimum":1}}}}}
        """#

    @Test func decidesTheCommonKeywordsItself() throws {
        let order = try schema(Self.order)
        #expect(try walk(order, #"{"id":1,"note":"ab","lines":[{"sku":"a","qty":2},{"sku":"bc","qty":1.5}]}"#) == true)
        #expect(try walk(order, #"{"id":1,"note":null,"lines":[]}"#) == true)
        // Multibyte text within maxLength in characters, not in bytes: the leaf goes to the tree's check.
        #expect(try walk(order, #"{"id":1,"note":"éééé","lines":[]}"#) == true)
        // Leaf keywords checked value by value: the walk itself says no.
        #expect(try walk(order, #"{"id":1,"lines":[{"sku":"A1","qty":2}]}"#) == false)
        #expect(try walk(order, #"{"id":1,"lines":[{"sku":"a","qty":0.5}]}"#) == false)
        #expect(try walk(order, #"{"id":1,"note":"abcde","lines":[]}"#) == false)
        // Anything else wrong goes to the tree, for its list of violations.
        for wrong in [#"{"lines":[]}"#, #"{"id":"1","lines":[]}"#, #"{"id":1.5,"lines":[]}"#, #"{"id":1,"lines":[],"x":0}"#,
                      #"{"id":1,"lines":[{},{},{},{}]}"#] {
            #expect(try walk(order, wrong) == nil, "\(wrong)")
        }
        // Not compact, or a name with an escape: the tree decides.
        #expect(try walk(order, #"{ "id":1,"lines":[]}"#) == nil)
        #expect(try walk(order, #"{"\u0069d":1,"lines":[]}"#) == nil)
    }

    /// Member names compare by canonical equivalence, as Swift's strings do: U+212A
    /// KELVIN SIGN is `K`. The walk compares bytes, so it must leave such names to the tree.
    @Test func namesEqualOnlyByUnicodeAreTheTreesToDecide() throws {
        let ascii = try schema(#"{"properties":{"K":{"type":"integer"}}}"#)
        #expect(try walk(ascii, "{\"\u{212A}\":\"x\"}") == nil)
        #expect(!ascii.validate(json: Array("{\"\u{212A}\":\"x\"}".utf8), maxDepth: 64).isEmpty)
        let kelvin = try schema("{\"properties\":{\"\u{212A}\":{\"type\":\"integer\"}}}")
        #expect(try walk(kelvin, #"{"K":"x"}"#) == nil)
        #expect(!kelvin.validate(json: Array(#"{"K":"x"}"#.utf8), maxDepth: 64).isEmpty)
        #expect(try walk(kelvin, #"{"K":1}"#) == nil)
    }

    /// An `anyOf`/`oneOf` whose branches allow different kinds of value is a branch table:
    /// the nullable idiom of OpenAPI 3.1 stays on the walk. Overlapping branches, and
    /// other applicators, hand the answer to the tree where they apply.
    @Test func disjointBranchesAreWalkedAndOtherApplicatorsAreTheTrees() throws {
        let nullable = try schema(##"""
            {"$defs":{"thing":{"type":"object","required":["id"],"properties":{"id":{"type":"integer"}}}},
             "type":"object","properties":{"a":{"oneOf":[{"$ref":"#/$defs/thing"},{"type":"null"}]},
                                           "b":{"anyOf":[{"type":"string","pattern":"^x"},{"type":["integer","boolean"]}]}}}
            """##)
        #expect(try walk(nullable, #"{"a":{"id":1},"b":"xy"}"#) == true)
        #expect(try walk(nullable, #"{"a":null,"b":7}"#) == true)
        #expect(try walk(nullable, #"{"a":null,"b":false}"#) == true)
        #expect(try walk(nullable, #"{"b":"y"}"#) == false)          // the branch's pattern, value by value
        #expect(try walk(nullable, #"{"a":{},"b":1}"#) == nil)       // the branch's `required`
        #expect(try walk(nullable, #"{"a":"x"}"#) == nil)            // no branch for a string
        #expect(try walk(nullable, #"{"b":1.5}"#) == nil)            // not an integer: the tree lists it
        let overlapping = try schema(#"{"properties":{"v":{"oneOf":[{"type":"number"},{"type":"integer"}]},"w":{"anyOf":[{"minimum":1},{"type":"string"}]}}}"#)
        #expect(try walk(overlapping, #"{"x":1}"#) == true)
        #expect(try walk(overlapping, #"{"v":1}"#) == nil)
        #expect(try walk(overlapping, #"{"w":"s"}"#) == nil)
        let all = try schema(#"{"properties":{"v":{"allOf":[{"type":"string"},{"maxLength":3}]},"n":{"not":{"type":"null"}}}}"#)
        #expect(try walk(all, #"{"x":1}"#) == true)
        #expect(try walk(all, #"{"v":"ab"}"#) == nil)
        #expect(try walk(all, #"{"n":1}"#) == nil)
    }

    /// Past its limits the walk steps aside: answers deeper than 256 levels, and documents
    /// of more than 100,000 schema objects, are the tree's.
    @Test func deepAnswersAndHugeDocumentsAreTheTreesToDecide() throws {
        let nested = try schema(##"{"$defs":{"n":{"type":"array","items":{"$ref":"#/$defs/n"}}},"$ref":"#/$defs/n"}"##)
        let deep = String(repeating: "[", count: 300) + String(repeating: "]", count: 300)
        #expect(nested.walk(json: Array(deep.utf8)) == nil)
        #expect(nested.validate(json: Array(deep.utf8), maxDepth: 512).isEmpty)
        let shallow = String(repeating: "[", count: 200) + String(repeating: "]", count: 200)
        #expect(nested.walk(json: Array(shallow.utf8)) == true)
        let members = (0...SchemaProgram.maxNodes).map { #""m\#($0)":{"type":"integer"}"# }.joined(separator: ",")
        let huge = try schema(#"{"type":"object","properties":{"# + members + "}}")
        #expect(huge.program == nil)
        #expect(huge.walk(json: Array(#"{"m1":1}"#.utf8)) == nil)
        #expect(!huge.validate(json: Array(#"{"m1":"x"}"#.utf8), maxDepth: 64).isEmpty)
    }

    /// The normalizer's check as it writes a JSON route's answer (DESIGN §10): the walk's
    /// rules on the tokens the normalizer finds, on input that need not be compact.
    func checked(_ schema: Schema, _ instance: String) throws -> (valid: Bool, vouched: Bool)? {
        let bytes = Array(instance.utf8)
        let tree = schema.validate(try JSONValue.parse(bytes, options: JSONReadOptions(allowFragments: true))).isEmpty
        guard let checked = schema.checkedWhileNormalizing(bytes) else { return nil }
        #expect(checked.valid == tree && checked.sameOutput, "normalizer's check \(checked), tree \(tree): \(instance)")
        return (checked.valid, checked.vouched)
    }

    @Test func theNormalizerChecksAsItWrites() throws {
        try #require(JSONNormalizer.fastPathAvailable, "this CPU does not run the fast path")
        let order = try schema(Self.order)
        // Whitespace and escapes the normalizer removes or rewrites change nothing.
        #expect(try checked(order, #"{ "id" : 1, "note" : "a\/", "lines" : [ ] }"#)! == (true, true))
        #expect(try checked(order, #"{"id":1,"note":"\/\/","lines":[]}"#)! == (true, true))
        // A leaf checked value by value, found at its place in the output.
        #expect(try checked(order, "{\"id\":1,\n\"lines\":[{\"sku\":\"A1\",\"qty\":2}]}")! == (false, true))
        // A rewritten escape moves the output under a value left for its own check: the walk decides.
        #expect(try checked(order, #"{"id":1,"note":"\u0061","lines":[{"sku":"bc","qty":2}]}"#)! == (true, false))
        #expect(try checked(order, #"{"id":1,"note":"abcde","lines":[]}"#)! == (false, true))
        for wrong in [#"{"lines":[]}"#, #"{"id":"1","lines":[]}"#, #"{"id":1.5,"lines":[]}"#, #"{"id":1,"lines":[],"x":0}"#,
                      #"{"id":1,"lines":[{},{},{},{}]}"#] {
            let result = try checked(order, wrong)!
            #expect(result == (false, false), "\(wrong): \(result)")
        }
        // An integer written with an exponent is an integer by value: the tree says so.
        #expect(try checked(order, #"{"id":1e0,"lines":[]}"#)! == (true, false))
        // An escaped name may be a declared one: the tree decides.
        #expect(try checked(order, #"{"\u0069d":1,"lines":[]}"#)! == (true, false))
        #expect(try checked(order, #"{"\u0069d":"1","lines":[]}"#)! == (false, false))
    }

    /// A member's place remembers the name the last object had there; objects whose members
    /// come in another order, or are other members, are still checked name by name.
    @Test func theNormalizersGuessesNeverDecideAName() throws {
        try #require(JSONNormalizer.fastPathAvailable, "this CPU does not run the fast path")
        let pair = try schema(#"{"type":"array","items":{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"string"},"ab":{"type":"null"}},"required":["a"]}}"#)
        #expect(try checked(pair, #"[{"a":1,"b":"x"},{"b":"y","a":2},{"a":3,"ab":null}]"#)! == (true, true))
        #expect(try checked(pair, #"[{"a":1,"b":"x"},{"a":2,"b":3}]"#)! == (false, false))
        #expect(try checked(pair, #"[{"a":1,"b":"x"},{"a":2,"ab":"x"}]"#)! == (false, false))
        #expect(try checked(pair, #"[{"a":1,"b":"x"},{"b":"x"}]"#)! == (false, false))
        // Names told apart only by their last 8 bytes, their middle ones, or their length.
        let twins = try schema(#"{"type":"array","items":{"type":"object","additionalProperties":false,"properties":{"profile_a_color":{"type":"integer"},"profile_b_color":{"type":"string"},"profile_link_a_color_x":{"type":"integer"},"profile_link_b_color_x":{"type":"string"},"abcdefgh":{"type":"integer"},"abcdefg":{"type":"string"}}}}"#)
        #expect(try checked(twins, #"[{"profile_a_color":1,"profile_link_a_color_x":1,"abcdefgh":1},{"profile_a_color":2,"profile_link_a_color_x":2,"abcdefgh":2}]"#)! == (true, true))
        #expect(try checked(twins, #"[{"profile_a_color":1},{"profile_b_color":2}]"#)! == (false, false))
        #expect(try checked(twins, #"[{"profile_link_a_color_x":1},{"profile_link_b_color_x":2}]"#)! == (false, false))
        #expect(try checked(twins, #"[{"abcdefgh":1},{"abcdefg":2}]"#)! == (false, false))
        #expect(try checked(twins, #"[{"abcdefg":"x"},{"abcdefgh":"x"}]"#)! == (false, false))
        // Objects with a member fewer or more than the one before: the member guessed after
        // the last one misses, the table finds it, and no value is ever checked against
        // another member's schema.
        let shifts = try schema(#"{"type":"array","items":{"type":"object","additionalProperties":false,"required":["a","d"],"properties":{"a":{"type":"integer"},"b":{"type":"string"},"c":{"type":"integer"},"d":{"type":"string"}}}}"#)
        #expect(try checked(shifts, #"[{"a":1,"b":"x","c":2,"d":"y"},{"a":1,"c":2,"d":"y"},{"a":1,"b":"x","c":2,"d":"y"},{"a":1,"d":"y"},{"a":1,"b":"x","c":2,"d":"y"}]"#)! == (true, true))
        #expect(try checked(shifts, #"[{"a":1,"b":"x","c":2,"d":"y"},{"a":1,"c":"2","d":"y"}]"#)! == (false, false))
        #expect(try checked(shifts, #"[{"a":1,"b":"x","c":2,"d":"y"},{"a":1,"c":2,"d":3}]"#)! == (false, false))
        #expect(try checked(shifts, #"[{"a":1,"b":"x","c":2,"d":"y"},{"a":1,"c":2,"d":"y","e":0}]"#)! == (false, false))
        #expect(try checked(shifts, #"[{"a":1,"c":2,"d":"y"},{"a":1,"b":"x","c":2,"d":"y"},{"a":1,"b":"x","c":2}]"#)! == (false, false))
        // Counts on a node that allows objects and arrays, and bounds no count meets.
        let both = try schema(#"{"type":["object","array"],"minItems":2,"minProperties":1}"#)
        #expect(try checked(both, "[1,2]")! == (true, true))
        #expect(try checked(both, "[1]")! == (false, false))
        #expect(try checked(both, #"{"a":1}"#)! == (true, true))
        #expect(try checked(both, "{}")! == (false, false))
        // A node that counts its members counts every one, however often its objects
        // repeat the same members in the same order.
        let pairs = try schema(#"{"type":"array","items":{"type":"object","minProperties":2,"maxProperties":2,"properties":{"a":{"type":"integer"},"b":{"type":"integer"}}}}"#)
        #expect(try checked(pairs, #"[{"a":1,"b":2},{"a":1,"b":2},{"a":1,"b":2}]"#)! == (true, true))
        #expect(try checked(pairs, #"[{"a":1,"b":2},{"a":1,"b":2},{"a":1}]"#)! == (false, false))
        #expect(try checked(pairs, #"[{"a":1,"b":2},{"a":1,"b":2},{"a":1,"b":2,"c":3}]"#)! == (false, false))
        #expect(try checked(pairs, #"[{"a":1,"b":2},{"a":1,"b":2},{"a":1,"a":2}]"#)! == (true, true))
        // Undeclared members between declared ones, learned as a member of their own.
        let mixed = try schema(#"{"type":"array","items":{"type":"object","required":["a","b"],"properties":{"a":{"type":"integer"},"b":{"type":"string"}},"additionalProperties":{"type":"boolean"}}}"#)
        #expect(try checked(mixed, #"[{"a":1,"x":true,"b":"s"},{"a":2,"y":false,"b":"t"},{"a":3,"x":true,"b":"u"}]"#)! == (true, true))
        #expect(try checked(mixed, #"[{"a":1,"x":true,"b":"s"},{"a":2,"x":true,"b":"t"},{"a":3,"x":1,"b":"u"}]"#)! == (false, false))
        #expect(try checked(mixed, #"[{"a":1,"x":true,"b":"s"},{"a":2,"x":true,"b":"t"},{"a":3,"x":true,"b":4}]"#)! == (false, false))
        #expect(try checked(mixed, #"[{"a":1,"x":true,"b":"s"},{"a":2,"x":true,"b":"t"},{"a":3,"x":true}]"#)! == (false, false))
        // Members of a nested object between a container's members: each object its own.
        let nest = try schema(#"{"type":"array","items":{"type":"object","required":["a","c"],"properties":{"a":{"type":"integer"},"b":{"type":"object","required":["a"],"properties":{"a":{"type":"string"}}},"c":{"type":"integer"}}}}"#)
        #expect(try checked(nest, #"[{"a":1,"b":{"a":"x"},"c":2},{"a":1,"b":{"a":"x"},"c":2}]"#)! == (true, true))
        #expect(try checked(nest, #"[{"a":1,"b":{"a":"x"},"c":2},{"a":1,"b":{"a":1},"c":2}]"#)! == (false, false))
        #expect(try checked(nest, #"[{"a":1,"b":{"a":"x"},"c":2},{"a":1,"b":{},"c":2}]"#)! == (false, false))
        #expect(try checked(nest, #"[{"a":1,"b":{"a":"x"},"c":2},{"a":1,"b":{"a":"x"},"c":"2"}]"#)! == (false, false))
        #expect(try checked(nest, #"[{"a":1,"b":{"a":"x"},"c":2},{"b":{"a":"x"},"c":2}]"#)! == (false, false))
        let none = try schema(#"{"type":["object","array"],"minProperties":2,"maxProperties":1,"minItems":1,"maxItems":0}"#)
        for instance in [#"{"a":1}"#, #"{"a":1,"b":2}"#, "[]", "[1]"] { #expect(try checked(none, instance)! == (false, false), "\(instance)") }
        // Names longer than one 32-byte compare.
        let long = String(repeating: "n", count: 40)
        let wide = try schema(#"{"type":"object","properties":{"\#(long)":{"type":"integer"},"\#(long)x":{"type":"string"}}}"#)
        #expect(try checked(wide, #"[{"\#(long)":1}]"#.dropFirst().dropLast().description)! == (true, true))
        #expect(try checked(wide, #"{"\#(long)x":1}"#)! == (false, false))
        #expect(try checked(wide, #"{"\#(long)y":1}"#)! == (true, true))
        // A long name after an undeclared member, and after a declared one, object by object.
        let open = try schema(#"{"type":"array","items":{"type":"object","properties":{"\#(long)":{"type":"integer"},"a":{"type":"integer"}}}}"#)
        #expect(try checked(open, #"[{"x":true,"\#(long)":1},{"x":true,"\#(long)":2},{"a":1,"\#(long)":3},{"a":1,"\#(long)":4}]"#)! == (true, true))
        #expect(try checked(open, #"[{"x":true,"\#(long)":1},{"x":true,"\#(long)":"2"}]"#)! == (false, false))
        #expect(try checked(open, #"[{"a":1,"\#(long)":1},{"a":1,"\#(long)":"2"}]"#)! == (false, false))
    }

    /// The normalizer's check follows as deep as the normalizer reads (its frames are on
    /// the stack to the default 512 levels, on the heap past them).
    @Test func theNormalizersCheckFollowsEveryLevel() throws {
        try #require(JSONNormalizer.fastPathAvailable, "this CPU does not run the fast path")
        let nested = try schema(##"{"$defs":{"n":{"type":["array","object"],"items":{"$ref":"#/$defs/n"},"additionalProperties":{"$ref":"#/$defs/n"},"required":["k"]}},"$ref":"#/$defs/n"}"##)
        func deep(_ levels: Int, _ inner: String = "") -> [UInt8] {
            Array((String(repeating: "[", count: levels) + inner + String(repeating: "]", count: levels)).utf8)
        }
        for (levels, maxDepth) in [(300, 512), (512, 512), (900, 1000)] {
            #expect(nested.checkedWhileNormalizing(deep(levels), maxDepth: maxDepth).map { ($0.valid, $0.vouched) }! == (true, true), "\(levels)")
            #expect(nested.checkedWhileNormalizing(deep(levels - 1, "1"), maxDepth: maxDepth).map { ($0.valid, $0.vouched) }! == (false, false), "\(levels)")
            #expect(nested.checkedWhileNormalizing(deep(levels - 2, #"{"k":[]}"#), maxDepth: maxDepth).map { ($0.valid, $0.vouched) }! == (true, true), "\(levels)")
            #expect(nested.checkedWhileNormalizing(deep(levels - 2, #"{"j":[]}"#), maxDepth: maxDepth).map { ($0.valid, $0.vouched) }! == (false, false), "\(levels)")
        }
        #expect(nested.checkedWhileNormalizing(deep(513), maxDepth: 512) == nil)
    }
}
