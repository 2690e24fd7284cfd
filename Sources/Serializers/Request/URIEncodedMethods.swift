/// AF's `HTTPMethodsEncodingParametersInURI`.
enum URIEncodedMethods {
    static func contains(_ method: String) -> Bool {
        switch method.uppercased() {
        case "GET", "HEAD", "DELETE": return true
        default: return false
        }
    }

    /// Appends encoded parameters to the client's query (`&` after an existing one).
    static func join(_ query: String?, _ encoded: String) -> String? {
        guard !encoded.isEmpty else { return query }
        guard let query, !query.isEmpty else { return encoded }
        return query + "&" + encoded
    }
}
