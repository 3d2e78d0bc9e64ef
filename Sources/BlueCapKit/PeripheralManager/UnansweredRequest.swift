// UnansweredRequest: a central's request the app did not answer in time.

// MARK: - UnansweredRequest

/// A read or write a ``MutableCharacteristic`` delivered to the app that was not answered with
/// ``MutableCharacteristic/respondToRequest(_:withResult:)`` within
/// ``MutableCharacteristic/requestTimeout``. bluetoothd was answered with the ATT Unlikely Error
/// (`ATTError.unlikelyError`, 0x0E), so the central sees a failure distinct from any
/// application error (0x80…0x9F) the app might send on purpose.
public struct UnansweredRequest: Sendable, CustomStringConvertible {
    /// The request, now answered (``ATTRequest/isAnswered`` is true; answering it again does nothing).
    public let request: ATTRequest
    /// How long it waited: the characteristic's ``MutableCharacteristic/requestTimeout`` then.
    public let waited: Duration

    /// `write F000AA12-… from 00:AA:… offset 0 unanswered after 10.0 seconds`.
    public var description: String { "\(request) unanswered after \(waited)" }
}
