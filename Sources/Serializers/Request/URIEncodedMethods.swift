import HTTPCore

/// AF's `HTTPMethodsEncodingParametersInURI`.
enum URIEncodedMethods {
    static func contains(_ method: String) -> Bool {
        method.equalsIgnoringASCIICase("GET") || method.equalsIgnoringASCIICase("HEAD") || method.equalsIgnoringASCIICase("DELETE")
    }

    /// Appends encoded parameters to the client's query (`&` after an existing one).
    static func join(_ query: String?, _ encoded: String) -> String? {
        guard !encoded.isEmpty else { return query }
        guard let query, !query.isEmpty else { return encoded }
        return query + "&" + encoded
    }
}
