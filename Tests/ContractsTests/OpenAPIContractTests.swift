@testable import Contracts
import Serializers
import Testing

@Suite struct OpenAPIContractTests {
    static let document = ##"""
    {"openapi": "3.1.0", "info": {"title": "t", "version": "1"},
     "servers": [{"url": "https://api.example.com/v1"}],
     "paths": {
       "/orders/{id}": {"get": {"responses": {
          "200": {"description": "one", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Order"}}}},
          "4XX": {"$ref": "#/components/responses/Problem"},
          "default": {"description": "other", "content": {"application/problem+json": {"schema": {"type": "object", "required": ["title"]}}}}}}},
       "/orders/mine": {"get": {"responses": {
          "200": {"description": "mine", "content": {"application/json": {"schema": {"type": "array", "items": {"$ref": "#/components/schemas/Order"}}}}}}}},
       "/health": {"get": {"responses": {"204": {"description": "no body"}}}}
     },
     "components": {
       "schemas": {"Order": {"type": "object", "required": ["id"], "properties": {"id": {"type": "integer"}, "note": {"type": ["string", "null"]}}}},
       "responses": {"Problem": {"description": "problem", "content": {"application/json": {"schema": {"required": ["error"]}}}}}
     }}
    """##

    func contract(_ text: String = Self.document) throws -> OpenAPIContract {
        try OpenAPIContract.compile(try JSONValue.parse(text), uri: "file:///contracts/orders.json")
    }

    func json(_ text: String) throws -> JSONValue { try JSONValue.parse(text) }

    @Test func theOperationIsFoundByTemplateAndMethodAndTheSchemaByStatus() throws {
        let c = try contract()
        let one = try #require(c.schema(path: "/orders/42", method: "GET", status: 200))
        #expect(one.accepts(try json(#"{"id": 42, "note": null}"#)))
        #expect(one.validate(try json(#"{"id": "42"}"#)).first?.schemaLocation == "file:///contracts/orders.json#/components/schemas/Order/properties/id/type")
        // A literal segment beats a template.
        let mine = try #require(c.schema(path: "/orders/mine", method: "get", status: 200))
        let (list, object) = (try json(#"[{"id": 1}]"#), try json(#"{"id": 1}"#))
        #expect(mine.accepts(list) && !mine.accepts(object))
        // The status's range, through a $ref to a component response; then default.
        let problem = try #require(c.schema(path: "/orders/42", method: "GET", status: 404))
        #expect(problem.validate(try json("{}")).first?.keyword == "required")
        let other = try #require(c.schema(path: "/orders/42", method: "GET", status: 500))
        #expect(other.accepts(try json(#"{"title": "x"}"#)))
        // Nothing to check: another method, another path, a response without a JSON body.
        #expect(c.schema(path: "/orders/42", method: "DELETE", status: 200) == nil)
        #expect(c.schema(path: "/orders/42/items", method: "GET", status: 200) == nil)
        #expect(c.schema(path: "/health", method: "GET", status: 204) == nil)
    }

    @Test func openAPI30sNullableAndBooleanExclusiveBounds() throws {
        let c = try contract(#"""
        {"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": {"/v": {"get": {"responses": {"200": {"description": "v",
          "content": {"application/json": {"schema": {"type": "object", "properties": {
            "v": {"type": "integer", "minimum": 1, "exclusiveMinimum": true, "nullable": true, "example": 2},
            "w": {"type": "number", "maximum": 5, "exclusiveMaximum": false}}}}}}}}}}}
        """#)
        let schema = try #require(c.schema(path: "/v", method: "GET", status: 200))
        #expect(schema.accepts(try json(#"{"v": 2, "w": 5}"#)))
        #expect(schema.accepts(try json(#"{"v": null}"#)))
        #expect(schema.validate(try json(#"{"v": 1}"#)).first?.keyword == "exclusiveMinimum")
    }

    @Test func aDocumentThatIsNotOpenAPI3OrHasABadSchemaIsRefused() throws {
        #expect(throws: SchemaError.self) { try contract(#"{"swagger": "2.0", "paths": {}}"#) }
        do {
            _ = try contract(#"{"openapi": "3.1.0", "paths": {"/a": {"get": {"responses": {"200": {"content": {"application/json": {"schema": {"minimun": 1}}}}}}}}}"#)
            Issue.record("accepted an unknown keyword")
        } catch let error as SchemaError {
            #expect(error.location == "file:///contracts/orders.json#/paths/~1a/get/responses/200/content/application~1json/schema/minimun")
        }
        #expect(throws: SchemaError.self) {
            try contract(##"{"openapi": "3.1.0", "paths": {"/a": {"get": {"responses": {"200": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Missing"}}}}}}}}}"##)
        }
    }
}
