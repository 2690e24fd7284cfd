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

    /// JSON of the canonical files' character, for clones without `shared/bench-data`:
    /// twitter (strings, escaped and raw Unicode, nesting), citm_catalog (many small
    /// objects and integers), canada (GeoJSON coordinates, number-heavy).
    static func json(like name: String) -> [UInt8] {
        var out = ""
        switch name {
        case "twitter":
            out = "{\"statuses\":["
            for i in 0..<1_200 {
                out += i > 0 ? "," : ""
                out += #"{"id":\#(505_874_924_095_815_681 + i),"text":"@aym0566x \u540d\u524d:\u524d\u7530\u3042\u3086\u307f #\#(i) https:\/\/t.co\/x","#
                out += #""user":{"name":"ブログ \#(i)","screen_name":"user_\#(i)","followers_count":\#(i * 37 % 9_999),"#
                out += #""profile":{"lang":"ja","verified":false,"url":null}},"entities":{"hashtags":[],"urls":[{"indices":[0,23]}]},"#
                out += #""retweet_count":\#(i % 7),"favorited":false,"coordinates":null}"#
            }
            out += "]}"
        case "citm_catalog":
            out = "{\"events\":{"
            for i in 0..<6_000 {
                out += i > 0 ? "," : ""
                out += #""\#(138_586_341 + i)":{"id":\#(138_586_341 + i),"name":"Event \#(i)","subTopicIds":[\#(337_184_269 + i % 9),\#(337_184_283)],"topicIds":[\#(324_846_099 + i % 5)],"logo":null}"#
            }
            out += "}}"
        default:
            out = "{\"type\":\"FeatureCollection\",\"features\":[{\"type\":\"Feature\",\"geometry\":{\"type\":\"Polygon\",\"coordinates\":[["
            var x = -65.613616999999977, y = 43.420273000000009
            for i in 0..<56_000 {
                out += i > 0 ? "," : ""
                out += "[\(x),\(y)]"
                x += 0.000123456789012345 * Double(i % 17 - 8)
                y -= 0.000098765432109876 * Double(i % 13 - 6)
            }
            out += "]]}}]}"
        }
        return Array(out.utf8)
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
