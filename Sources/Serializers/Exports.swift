// Serializers speak in HTTPCore's value types (UpstreamResponse, MediaType).
@_exported import HTTPCore
