// libFuzzer target for drift learning (Sources/Contracts/Shape), built by fuzz/run.sh.
// The input is a run of answers split at NUL bytes, learned in order by one endpoint
// (a reported change needs two answers first). Oracles: the walk never traps, whatever
// the bytes; an answer learned again reports nothing; skipping answers of a learned
// fingerprint changes no report and no learned document; and the learned OpenAPI
// document compiles and accepts every normalized answer it was learned from, read as a
// tree and as bytes.
import Serializers

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let shapes = RouteShapes(route: "fuzz")
    let walked = RouteShapes(route: "fuzz", fingerprints: false)
    // Raw bytes go to a shape of their own: whatever they are, the walk must stay harmless.
    let raw = RouteShapes(route: "raw")
    var learned: [JSONValue] = []
    for piece in input.split(separator: 0, omittingEmptySubsequences: false).prefix(16) {
        let bytes = Array(piece)
        _ = observe(raw, bytes)
        guard let parsed = try? JSONValue.parse(bytes, options: JSONReadOptions(allowFragments: true, maxDepth: 64)) else { continue }
        // As the normalizer writes it: what the daemon learns from.
        let normalized = NormalizedJSON(parsed).bytes
        let first = observe(shapes, normalized)
        require(first == observe(walked, normalized), "a fingerprint changed what was reported")
        require(observe(shapes, normalized).isEmpty, "the same answer reported twice")
        require(observe(walked, normalized).isEmpty, "the same answer reported twice, walked")
        learned.append(parsed)
    }
    guard !learned.isEmpty, shapes.summary.unlearnedPointers == 0 else { return 0 }
    let document = shapes.document(title: "fuzz")
    require(document == walked.document(title: "fuzz"), "a fingerprint changed the learned document")
    let contract: OpenAPIContract
    do throws(SchemaError) {
        contract = try OpenAPIContract.compile(document, uri: "file:///fuzz/learned.json")
    } catch {
        require(false, "the learned document does not compile: \(error.message) at \(error.location)"); return 0
    }
    guard let schema = contract.schema(path: "/items/7", method: "GET", status: 200) else { require(false, "no schema for the endpoint"); return 0 }
    for answer in learned {
        let violations = schema.validate(answer)
        require(violations.isEmpty, "the learned document refuses an answer it learned: \(violations)")
        require(schema.validate(json: NormalizedJSON(answer).bytes, maxDepth: 64).isEmpty, "the walk refuses an answer the tree accepts")
    }
    return 0
}

func observe(_ shapes: RouteShapes, _ bytes: [UInt8]) -> [ShapeChange] {
    bytes.withUnsafeBufferPointer { shapes.observe(endpoint: "GET /items/{id}", status: 200, body: $0, after: 2, now: 0) }.map(\.change)
}
