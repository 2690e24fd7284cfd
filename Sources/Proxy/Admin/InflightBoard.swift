import HTTPCore
import Serializers
import Synchronization
import Upstream

/// Every worker's transfers in flight, as their last progress tick saw them (at most
/// `Worker.progressInterval` old): what `/-/inflight` lists. One per process, made by
/// the server and handed to every worker.
final class InflightBoard: Sendable {
    private let byWorker = Mutex<[ObjectIdentifier: [TransferProgress]]>([:])

    func publish(_ flows: [TransferProgress], worker: ObjectIdentifier) {
        byWorker.withLock { $0[worker] = flows.isEmpty ? nil : flows }
    }

    var all: [TransferProgress] { byWorker.withLock { Array($0.values.joined()) }.sorted { $0.started < $1.started } }
}
