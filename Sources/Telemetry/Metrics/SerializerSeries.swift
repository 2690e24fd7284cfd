struct SerializerSeries: Hashable, Sendable {
    var route: String
    var serializer: String
}
