// ATTRequest: a central's read or write of a local characteristic, and how the app answers it.

import BlueZ
import DBus
import Foundation

// MARK: - CentralIdentity

/// The central behind a request: its `org.bluez.Device1` object under the local adapter
/// (the `device` option of `GattCharacteristic1.ReadValue`/`WriteValue`).
public struct CentralIdentity: Sendable, Hashable, CustomStringConvertible {
    /// The central's `Device1` path, e.g. `/org/bluez/hci1/dev_00_AA_01_00_00_01`; empty when
    /// bluetoothd did not say.
    public let devicePath: String

    /// A central known by its `Device1` path.
    public init(devicePath: String) { self.devicePath = devicePath }

    /// The Bluetooth address from the path (`00:AA:01:00:00:01`), when it has the `dev_` form.
    public var address: String? {
        guard let last = devicePath.split(separator: "/").last, last.hasPrefix("dev_") else { return nil }
        let parts = last.dropFirst(4).split(separator: "_")
        guard parts.count == 6, parts.allSatisfy({ $0.count == 2 }) else { return nil }
        return parts.joined(separator: ":")
    }

    /// The address, else the path.
    public var description: String { address ?? (devicePath.isEmpty ? "unknown central" : devicePath) }
}

// MARK: - ATTRequestError

/// The ATT error a peripheral answers a request with: the library's one ATT code type.
@available(*, deprecated, renamed: "ATTError")
public typealias ATTRequestError = ATTError

/// The answer to an ``ATTRequest``.
public enum ATTResult: Sendable, Equatable {
    /// Accept: a read replies the characteristic's value from the request's offset; a write
    /// stores the bytes at the offset.
    case success
    /// Refuse with an ATT error.
    case failure(ATTError)
}

// MARK: - ATTRequest

/// A read or write of a ``MutableCharacteristic`` from a central, delivered by
/// ``MutableCharacteristic/startRespondingToReadRequests(capacity:)`` and
/// ``MutableCharacteristic/startRespondingToWriteRequests(capacity:)``. bluetoothd's
/// `ReadValue`/`WriteValue` call is answered only when the app calls
/// ``MutableCharacteristic/respondToRequest(_:withResult:)`` (or the characteristic's
/// ``MutableCharacteristic/requestTimeout`` elapses: `ATTError.unlikelyError`, reported by
/// ``MutableCharacteristic/whenRequestUnanswered()``).
public final class ATTRequest: Sendable, CustomStringConvertible {
    /// Read or write.
    public enum Kind: Sendable, Equatable {
        /// `ReadValue`.
        case read
        /// `WriteValue`.
        case write
    }

    /// How a write was sent.
    public enum WriteType: String, Sendable, Equatable {
        /// With response (Write Request).
        case request
        /// Without response (Write Command).
        case command
        /// A reliable (queued) write.
        case reliable
    }

    /// Read or write.
    public let kind: Kind
    /// The characteristic's UUID.
    public let characteristicUUID: BLEUUID
    /// The central.
    public let central: CentralIdentity
    /// Where the read or write starts (`offset`).
    public let offset: Int
    /// The link's ATT MTU (`mtu`), when bluetoothd gave it.
    public let mtu: Int?
    /// The link type (`link`, e.g. `"LE"`).
    public let link: String?
    /// For writes: how the central wrote (`type`).
    public let writeType: WriteType?
    /// For writes: the bytes written. For reads: nil.
    public let value: Data?
    /// For writes: bluetoothd only asks to authorize a prepared write (`prepare-authorize`);
    /// the value is not stored on success.
    public let isPrepareAuthorization: Bool
    let server: GattServerRequest

    init(server: GattServerRequest, characteristicUUID: BLEUUID) {
        self.server = server
        self.characteristicUUID = characteristicUUID
        let o = server.options
        central = CentralIdentity(devicePath: o.device?.rawValue ?? "")
        offset = o.offset
        mtu = o.mtu
        link = o.link
        writeType = o.writeType.flatMap { WriteType(rawValue: $0.rawValue) }
        isPrepareAuthorization = o.prepareAuthorize
        switch server.operation {
        case .read:
            kind = .read
            value = nil
        case .write(let d):
            kind = .write
            value = d
        }
    }

    /// Whether the request was answered (or timed out).
    public var isAnswered: Bool { server.isAnswered }

    /// `read F000AA12-… from 00:AA:… offset 0`.
    public var description: String {
        "\(kind == .read ? "read" : "write") \(characteristicUUID) from \(central) offset \(offset)"
            + (value.map { " \(SerDe.hexString($0))" } ?? "")
    }
}

/// A central enabled or disabled notifications of a ``MutableCharacteristic``
/// (bluetoothd's `StartNotify`/`StopNotify`, first subscriber in, last out).
public enum SubscriptionEvent: Sendable, Equatable {
    /// Notifying started.
    case subscribed
    /// Notifying stopped.
    case unsubscribed
}
