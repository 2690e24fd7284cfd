/// Anything that receives completion events: the log, the metrics, the live stream and
/// the recent ring all sit behind this one protocol. Called on the worker's thread.
public protocol CompletionSink: AnyObject {
    func record(_ event: CompletionEvent)
}
