// Timeouts in seconds: the forms BlueCap users write (`timeout: 10.0`), next to the Duration ones.
import Foundation

// MARK: - Seconds

extension Duration {
    /// `seconds` (a `TimeInterval`) as a Duration; negative and NaN become zero.
    static func bluecapSeconds(_ seconds: TimeInterval) -> Duration {
        seconds.isFinite && seconds > 0 ? .milliseconds(Int64((seconds * 1000).rounded())) : .zero
    }
}

// Each operation that takes a `Duration` also takes seconds, as iOS BlueCap's `TimeInterval`
// timeouts do. The seconds parameter has no default, so a call without it picks the Duration
// form and a literal (`10.0`, `10`) picks this one: no call is ambiguous.
// The reference documents the Duration forms; these are hidden from it
// (`@_documentation(visibility: internal)`) so that links to an operation stay unambiguous, and
// the module overview states the rule.

extension CentralManager {
    /// ``whenPoweredOn(timeout:)`` with the timeout in seconds.
    @_documentation(visibility: internal)
    public func whenPoweredOn(timeout seconds: TimeInterval) -> Future<Void> {
        whenPoweredOn(timeout: .bluecapSeconds(seconds))
    }

    /// ``startScanning(forServiceUUIDs:capacity:timeout:options:)`` with the timeout in seconds.
    @_documentation(visibility: internal)
    public func startScanning(forServiceUUIDs uuids: [BLEUUID]? = nil, capacity: Int = 100, timeout seconds: TimeInterval,
                              options: ScanOptions = ScanOptions()) -> FutureStream<Peripheral> {
        startScanning(forServiceUUIDs: uuids, capacity: capacity, timeout: .bluecapSeconds(seconds), options: options)
    }
}

extension Peripheral {
    /// ``connect(timeoutRetries:disconnectRetries:connectionTimeout:capacity:)`` with the
    /// connection timeout in seconds.
    @_documentation(visibility: internal)
    public func connect(timeoutRetries: Int = 0, disconnectRetries: Int = 0, connectionTimeout seconds: TimeInterval,
                        capacity: Int = 10) -> FutureStream<(peripheral: Peripheral, connectionEvent: ConnectionEvent)> {
        connect(timeoutRetries: timeoutRetries, disconnectRetries: disconnectRetries,
                connectionTimeout: .bluecapSeconds(seconds), capacity: capacity)
    }

    /// ``reconnect(withDelay:)`` with the delay in seconds.
    @_documentation(visibility: internal)
    public func reconnect(withDelay seconds: TimeInterval) {
        reconnect(withDelay: .bluecapSeconds(seconds))
    }

    /// ``discoverServices(_:timeout:)`` with the timeout in seconds.
    @_documentation(visibility: internal)
    public func discoverServices(_ uuids: [BLEUUID]? = nil, timeout seconds: TimeInterval) -> Future<Peripheral> {
        discoverServices(uuids, timeout: .bluecapSeconds(seconds))
    }
}

extension Service {
    /// ``discoverCharacteristics(_:timeout:)`` with the timeout in seconds.
    @_documentation(visibility: internal)
    public func discoverCharacteristics(_ uuids: [BLEUUID]? = nil, timeout seconds: TimeInterval) -> Future<Service> {
        discoverCharacteristics(uuids, timeout: .bluecapSeconds(seconds))
    }
}

extension Characteristic {
    /// ``read(timeout:)`` with the timeout in seconds.
    @_documentation(visibility: internal)
    public func read(timeout seconds: TimeInterval) -> Future<Characteristic> {
        read(timeout: .bluecapSeconds(seconds))
    }

    /// ``write(data:timeout:type:)`` with the timeout in seconds.
    @_documentation(visibility: internal)
    public func write(data: Data, timeout seconds: TimeInterval, type: WriteType = .withResponse) -> Future<Characteristic> {
        write(data: data, timeout: .bluecapSeconds(seconds), type: type)
    }

    /// ``write(_:timeout:type:)`` with the timeout in seconds.
    @_documentation(visibility: internal)
    public func write<T: Deserializable>(_ value: T, timeout seconds: TimeInterval, type: WriteType = .withResponse) -> Future<Characteristic> {
        write(value, timeout: .bluecapSeconds(seconds), type: type)
    }

    /// ``startNotifying(timeout:resubscribeOnReconnect:via:)`` with the timeout in seconds.
    @_documentation(visibility: internal)
    public func startNotifying(timeout seconds: TimeInterval, resubscribeOnReconnect: Bool = true,
                               via transport: NotificationTransport = .acquiredSocket) -> Future<Characteristic> {
        startNotifying(timeout: .bluecapSeconds(seconds), resubscribeOnReconnect: resubscribeOnReconnect, via: transport)
    }

    /// ``stopNotifying(timeout:)`` with the timeout in seconds.
    @_documentation(visibility: internal)
    public func stopNotifying(timeout seconds: TimeInterval) -> Future<Characteristic> {
        stopNotifying(timeout: .bluecapSeconds(seconds))
    }
}

extension Descriptor {
    /// ``read(timeout:)`` with the timeout in seconds.
    @_documentation(visibility: internal)
    public func read(timeout seconds: TimeInterval) -> Future<Descriptor> {
        read(timeout: .bluecapSeconds(seconds))
    }

    /// ``write(data:timeout:)`` with the timeout in seconds.
    @_documentation(visibility: internal)
    public func write(data: Data, timeout seconds: TimeInterval) -> Future<Descriptor> {
        write(data: data, timeout: .bluecapSeconds(seconds))
    }
}

extension PeripheralManager {
    /// ``whenPoweredOn(timeout:)`` with the timeout in seconds.
    @_documentation(visibility: internal)
    public func whenPoweredOn(timeout seconds: TimeInterval) -> Future<Void> {
        whenPoweredOn(timeout: .bluecapSeconds(seconds))
    }
}
