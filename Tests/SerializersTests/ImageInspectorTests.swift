@testable import Serializers
import TestSupport
import Testing

@Suite struct ImageInspectorTests {
    @Test(arguments: [
        ("sample.png", "png", 7, 5), ("sample.jpg", "jpeg", 7, 5), ("sample-progressive.jpg", "jpeg", 7, 5),
        ("sample.gif", "gif", 7, 5), ("sample.bmp", "bmp", 7, 5), ("sample-le.tiff", "tiff", 7, 5),
        ("sample-be.tiff", "tiff", 9, 4), ("sample.ico", "ico", 16, 16), ("sample-lossy.webp", "webp", 7, 5),
        ("sample-lossless.webp", "webp", 7, 5), ("sample-alpha.webp", "webp", 7, 5),
    ])
    func readsFormatAndSizeFromTheHeader(file: String, format: String, width: Int, height: Int) throws {
        let info = try ImageInspector.inspect(try Fixture.bytes("images/\(file)"))
        #expect(info == ImageInspector.Info(format: format, width: width, height: height))
    }

    @Test(arguments: ["sample.png", "sample.jpg", "sample.gif", "sample.bmp", "sample-le.tiff", "sample.ico", "sample-lossy.webp"])
    func truncatedImagesFail(file: String) throws {
        let bytes = try Fixture.bytes("images/\(file)")
        for cut in [1, 8, 16, bytes.count / 2, bytes.count - 1] where cut < bytes.count {
            #expect(throws: TranscodeError.self, "\(file) cut at \(cut)") { try ImageInspector.inspect(Array(bytes.prefix(cut))) }
        }
    }

    @Test func serializerReportsSizeAndOptionallyData() throws {
        let bytes = try Fixture.bytes("images/sample.gif")
        let plain = try makeSerializer("image").serialize(UpstreamResponse(status: 200, contentType: "image/gif", body: bytes))
        #expect(plain.text == #"{"format":"gif","width":7,"height":5,"bytes":51}"#)
        let withData = try makeSerializer("image", ["image.include_data=true"])
            .serialize(UpstreamResponse(status: 200, contentType: "image/gif", body: bytes))
        #expect(withData.value?.value["base64"]?.stringValue?.hasPrefix("R0lGODdh") == true)
    }

    @Test(arguments: ["image/tiff", "image/jpeg", "image/gif", "image/png", "image/ico", "image/x-icon", "image/bmp",
                      "image/x-bmp", "image/x-xbitmap", "image/x-win-bitmap", "image/webp", "image/jpg"])
    func acceptsAFImageTypes(type: String) throws {
        let bytes = try Fixture.bytes("images/sample.png")
        #expect(try makeSerializer("image").serialize(UpstreamResponse(status: 200, contentType: type, body: bytes)).succeeded)
    }

    @Test func unknownBytesFail() {
        #expect(throws: TranscodeError.self) { try ImageInspector.inspect(Array("hello world".utf8)) }
    }

    /// Found by fuzz/image: a BMP header whose row size × height passes Int trapped (a
    /// crash of the worker) instead of failing as a truncated image.
    @Test func aBMPPixelArrayPastIntIsTruncatedNotATrap() throws {
        let bytes = try Fixture.bytes("images/regression-bmp-size-overflow.bmp")
        do throws(TranscodeError) {
            _ = try ImageInspector.inspect(bytes)
            Issue.record("the oversized BMP was accepted")
        } catch {
            #expect(error.description == "truncated or corrupt BMP image")
        }
    }
}
