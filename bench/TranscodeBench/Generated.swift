import Foundation

/// Benchmark payloads that are generated rather than shipped.
enum Generated {
    /// A product catalog with attributes, a default and a prefixed namespace, predefined
    /// entities and character references, CDATA, multi-line and non-ASCII text.
    static func xmlCatalog(minimumBytes: Int) -> [UInt8] {
        var out = Array("""
            <?xml version="1.0" encoding="UTF-8"?>
            <catalog xmlns="urn:example:catalog" xmlns:x="urn:example:ext" generated="2026-11-22T00:00:00Z">

            """.utf8)
        var id = 0
        while out.count < minimumBytes {
            id += 1
            out.append(contentsOf: """
                  <product id="p\(id)" x:sku="SKU-\(id * 7919 % 100_000)" available="\(id % 3 != 0)">
                    <name>Widget \(id) &amp; Sons &lt;deluxe&gt;</name>
                    <price currency="EUR">\(id % 997).\(id % 100)</price>
                    <description><![CDATA[Line one with <b>markup</b> & symbols
                multi-line text for product \(id)]]></description>
                    <tags><tag>alpha</tag><tag>beta</tag><tag>gamma-\(id % 13)</tag></tags>
                    <x:note lang="de">Größe &#x2713; naïve café — \(id)</x:note>
                    <dimensions w="\(id % 50)" h="\(id % 70)" d="\(id % 90)"/>
                    <empty/>
                  </product>

                """.utf8)
        }
        out.append(contentsOf: "</catalog>\n".utf8)
        return out
    }

    /// twitter.json as a binary property list (nulls dropped: plists have none).
    static func binaryPlist(from json: [UInt8]) throws -> [UInt8] {
        let object = try JSONSerialization.jsonObject(with: Data(json))
        let data = try PropertyListSerialization.data(fromPropertyList: strippingNulls(object), format: .binary, options: 0)
        return [UInt8](data)
    }

    static func strippingNulls(_ value: Any) -> Any {
        if let dict = value as? [String: Any] {
            return dict.filter { !($0.value is NSNull) }.mapValues(strippingNulls)
        }
        if let array = value as? [Any] {
            return array.filter { !($0 is NSNull) }.map(strippingNulls)
        }
        return value
    }
}
