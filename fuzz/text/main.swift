// libFuzzer target for text decoding, UTF-8 validation, base64 and the text and raw
// serializers (Sources/Serializers/Text), built by fuzz/run.sh. Oracles independent of
// the code under test: Swift's own UTF-8 validation, a base64 round trip, and the JSON
// tree parser reading back what the serializers write.
@testable import Serializers

let charsets: [String?] = [nil, "utf-8", "us-ascii", "iso-8859-1", "windows-1252", "utf-16", "shift_jis", "x-unknown"]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let valid = String(validating: input, as: UTF8.self) != nil
    precondition(UTF8Validation.isValid(input) == valid, "UTF-8 validation disagrees with Swift's on \(Array(input.prefix(32)))")
    precondition(Base64.decode(Base64.encode(input)) == input, "base64 does not round-trip")
    precondition(Base64.encode(input).count == Base64.encodedLength(size), "base64 length")

    let charset = charsets[size % charsets.count]
    if let decoded = try? TextDecoding.utf8(input, charset: charset) {
        precondition(UTF8Validation.isValid(decoded), "\(charset ?? "default") decoding produced invalid UTF-8")
    }
    let validation = ResponseValidation(statusCodes: nil, contentTypes: nil, maxOutput: 3 * size + 16)
    let contentType = charset.map { "text/plain; charset=\($0)" } ?? "text/plain"
    for serializer in [TextResponseSerializer(validation: validation) as any ResponseSerializer, RawResponseSerializer(validation: validation)] {
        let result = serializer.serialize(UpstreamResponse(status: 200, contentType: contentType, body: input))
        if let value = result.value, result.error == nil {
            precondition((try? JSONValue.parse(value.bytes)) != nil, "\(result.serializer) wrote invalid JSON")
            precondition(value.bytes.count <= 3 * size + 16 || size <= 1, "\(result.serializer) over its budget")
        } else {
            precondition(result.error != nil, "no value and no error")
        }
    }
    return 0
}
