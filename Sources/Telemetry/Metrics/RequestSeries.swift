struct RequestSeries: Hashable, Sendable {
    var route: String
    var method: String
    var code: Int
    var outcome: String
}
