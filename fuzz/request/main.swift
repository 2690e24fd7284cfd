// libFuzzer target for the request serializers (Sources/Serializers/Request), built by
// fuzz/run.sh. The body is read as JSON, a form or a property list (by the input's
// length), and every serializer — http for GET and POST, json, plist — must say what the
// encoders said before they walked a JSONTape instead of a JSONValue tree (Reference.swift):
// the same query, body and Content-Type, or the same error. And each stays within its
// output budget.
@testable import Serializers

let types = ["application/json", "application/x-www-form-urlencoded", "application/x-plist"]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let body = Array(UnsafeBufferPointer(start: data, count: size))
    let type = types[size % types.count]
    for (name, method) in [("http", "GET"), ("http", "POST"), ("json", "POST"), ("plist", "PUT")] {
        let input = RequestInput(method: method, query: size % 2 == 0 ? nil : "q=1", contentType: type, body: body,
                                 maxDepth: 32, maxOutput: 64 * size + 4096)
        let serializer = try! RequestSerializerRegistry.make(name)
        let now: Result<SerializedRequest, RequestSerializationError>
        do throws(RequestSerializationError) { now = .success(try serializer.serialize(input)) } catch { now = .failure(error) }
        let before = reference(name, input)
        if case .failure(let error) = now {
            precondition(!error.description.isEmpty, "a failure without a detail")
            if error.description.contains("would exceed") { continue }
        }
        precondition(now == before, "\(name) \(method) \(type): now \(now), before \(before)")
        if case .success(let out) = now {
            precondition(out.body.count + (out.query?.utf8.count ?? 0) <= input.budget.limit + 8, "over budget")
        }
    }
    return 0
}

/// The serializers as they were, on the tree (unbounded: the budget is checked above).
func reference(_ name: String, _ r: RequestInput) -> Result<SerializedRequest, RequestSerializationError> {
    do throws(RequestSerializationError) {
        let parameters = try ReferenceRequestParameters.decode(r)
        let uri = ["GET", "HEAD", "DELETE"].contains(r.method)
        if uri || name == "http" {
            let encoded = parameters.map(ReferenceQueryStringEncoder.encode) ?? ""
            if uri { return .success(SerializedRequest(query: URIEncodedMethods.join(r.query, encoded), contentType: nil, body: [])) }
            return .success(SerializedRequest(query: r.query, contentType: "application/x-www-form-urlencoded", body: Array(encoded.utf8)))
        }
        guard let parameters else { return .success(SerializedRequest(query: r.query, contentType: nil, body: [])) }
        if name == "json" {
            return .success(SerializedRequest(query: r.query, contentType: "application/json", body: NormalizedJSON(.object(parameters)).bytes))
        }
        return .success(SerializedRequest(query: r.query, contentType: "application/x-plist", body: try ReferencePlistXMLWriter.write(.object(parameters))))
    } catch {
        return .failure(error)
    }
}
