// libFuzzer target for the image header inspector (Sources/Serializers/Transcoders/
// ImageInspector.swift), built by fuzz/run.sh: any bytes give a result or a detail, never
// a trap; a result names one of the seven formats with positive dimensions; and the image
// serializer's JSON (with include_data) is valid and within its budget.
@testable import Serializers

let formats: Set<String> = ["png", "jpeg", "gif", "bmp", "tiff", "ico", "webp"]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    do throws(TranscodeError) {
        let info = try ImageInspector.inspect(input)
        precondition(formats.contains(info.format), "unknown format \(info.format)")
        precondition(info.width > 0 && info.height > 0, "dimensions \(info.width)×\(info.height)")
    } catch {
        precondition(!error.description.isEmpty, "a failure without a detail")
    }
    let serializer = ImageResponseSerializer(validation: ResponseValidation(statusCodes: nil, contentTypes: nil, maxOutput: 4 * size + 64),
                                             options: ImageOptions(includeData: true))
    let result = serializer.serialize(UpstreamResponse(status: 200, contentType: "image/png", body: input))
    if let value = result.value, result.error == nil {
        precondition((try? JSONValue.parse(value.bytes)) != nil, "the image JSON is not valid")
        precondition(value.bytes.count <= OutputBudget(input: size, cap: 4 * size + 64).limit, "over budget")
    }
    return 0
}
