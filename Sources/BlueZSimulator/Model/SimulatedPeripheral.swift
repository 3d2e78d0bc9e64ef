// SimulatedPeripheral: a remote LE peripheral described in Swift, fluent, for the simulator.

import Foundation

// MARK: - SimulatedPeripheral

/// A simulated remote peripheral: what it advertises, its GATT database and its firmware.
///
/// ```swift
/// let tag = SimulatedPeripheral.spec(address: "C0:FF:EE:00:00:01")
///     .name("SensorTag").rssi(-52)
///     .advertising(uuids: ["F000AA10-0451-4000-B000-000000000000"])
///     .manufacturerData(id: 0x000D, data: Data([1, 2]))
///     .service("F000AA10-0451-4000-B000-000000000000") {
///         $0.characteristic("F000AA11-0451-4000-B000-000000000000", flags: [.read, .notify], value: Data([0, 0, 64]))
///         $0.characteristic("F000AA12-0451-4000-B000-000000000000", flags: [.read, .write], value: Data([0]))
///     }
///     .firmware(PeripheralFirmware(onWrite: { request, value in .success(()) }))
/// ```
public struct SimulatedPeripheral: Sendable {
    /// "public" or "random" (Device1.AddressType).
    public enum AddressType: String, Sendable, Codable {
        /// A public (IEEE-assigned) address.
        case `public`
        /// A random (static or private) address.
        case random
    }

    /// The device address, upper case.
    public var address: String
    /// Device1.AddressType.
    public var addressType: AddressType = .public
    /// BLE privacy: the peripheral advertises from a resolvable private address (a random one,
    /// new at each ``BlueZSimulator/rotatePrivateAddress(of:)``) and `address` is its identity
    /// address, which it hands over with its IRK when it bonds. Until then each private address
    /// is a device of its own to bluetoothd; once bonded, bluetoothd resolves every later one to
    /// the bonded device, whose `Device1.Address` is then the identity (`AddressType` public)
    /// while its object path keeps the private address it was found at.
    public var usesPrivacy = false
    /// The advertised local name (Device1.Name), if any.
    public var name: String?
    /// The received signal strength in dBm (Device1.RSSI).
    public var rssi: Int16 = -60
    /// Advertised TX power (Device1.TxPower), if any.
    public var txPower: Int16?
    /// Advertised service UUIDs (Device1.UUIDs before services are resolved).
    public var advertisedUUIDs: [String] = []
    /// Manufacturer data by company id (Device1.ManufacturerData).
    public var manufacturerData: [UInt16: Data] = [:]
    /// Service data by UUID (Device1.ServiceData).
    public var serviceData: [String: Data] = [:]
    /// Appearance (Device1.Appearance), if advertised.
    public var appearance: UInt16?
    /// The Flags AD structure (Device1.AdvertisingFlags), if advertised; by default LE General
    /// Discoverable and BR/EDR Not Supported (0x06), as an LE-only peripheral advertises.
    public var flags: UInt8? = 0x06
    /// AD structures of types bluetoothd does not decode (Device1.AdvertisingData), AD type →
    /// data. Types bluetoothd decodes (flags, UUID lists, names, TX power, service and
    /// manufacturer data, appearance, …) are ignored here, as bluetoothd's `bt_ad_add_data` does:
    /// give those with the other setters.
    public var otherADStructures: [UInt8: Data] = [:]
    /// Whether Connect can succeed.
    public var connectable = true
    /// The ATT MTU the peripheral negotiates (GattCharacteristic1.MTU, AcquireNotify's mtu).
    public var mtu: UInt16 = 517
    /// Time from Connect to Connected=true (zero: Connect links up before the next call is handled).
    public var connectionDelay: Duration = .milliseconds(2)
    /// Time from Connected=true to ServicesResolved=true (service discovery).
    public var discoveryDelay: Duration = .milliseconds(2)
    /// The GATT database, in handle order.
    public var services: [SimulatedService] = []
    /// Answers reads and writes; the default stores values.
    public var firmware = PeripheralFirmware()
    /// How it pairs (IO capability, refusal, silence).
    public var pairing = SimulatedPairing()
    /// Characteristic UUID → how many of its next reads the peripheral never answers (a firmware
    /// bug, a peer busy elsewhere). ATT allows one request at a time, so every later request of
    /// the link waits behind it until bluetoothd's ATT transaction timeout
    /// (``SimulatorCore/attTimeout``), which closes the bearer: see ``leavesReadsUnanswered(of:count:)``.
    public var unansweredReads: [String: Int] = [:]

    /// A peripheral with `address` (trapping on a malformed one) and nothing else.
    public static func spec(address: String) -> SimulatedPeripheral {
        guard let a = BluetoothAddress.normalize(address) else { preconditionFailure("bad address \(address)") }
        return SimulatedPeripheral(address: a)
    }

    // MARK: Fluent setters

    /// Sets the advertised local name.
    public func name(_ name: String?) -> Self { with { $0.name = name } }
    /// Sets the RSSI.
    public func rssi(_ rssi: Int16) -> Self { with { $0.rssi = rssi } }
    /// Sets the advertised TX power.
    public func txPower(_ p: Int16?) -> Self { with { $0.txPower = p } }
    /// Sets the address type.
    public func addressType(_ t: AddressType) -> Self { with { $0.addressType = t } }
    /// Sets the advertised service UUIDs.
    public func advertising(uuids: [String]) -> Self {
        with { $0.advertisedUUIDs = uuids.map(BluetoothUUID.literal) }
    }
    /// Adds manufacturer data for company `id`.
    public func manufacturerData(id: UInt16, data: Data) -> Self { with { $0.manufacturerData[id] = data } }
    /// Adds service data for `uuid`.
    public func serviceData(uuid: String, data: Data) -> Self {
        with { $0.serviceData[BluetoothUUID.literal(uuid)] = data }
    }
    /// Sets the appearance.
    public func appearance(_ a: UInt16?) -> Self { with { $0.appearance = a } }
    /// Sets the Flags AD structure (nil: none advertised).
    public func flags(_ f: UInt8?) -> Self { with { $0.flags = f } }
    /// Adds an AD structure of a type bluetoothd keeps raw (e.g. 0x26 Transport Discovery Data,
    /// 0x30 Broadcast Name); see ``otherADStructures``.
    public func adStructure(type: UInt8, data: Data) -> Self { with { $0.otherADStructures[type] = data } }
    /// Makes the peripheral (non-)connectable.
    public func connectable(_ c: Bool) -> Self { with { $0.connectable = c } }
    /// Sets the negotiated MTU.
    public func mtu(_ m: UInt16) -> Self { with { $0.mtu = m } }
    /// Sets the connection and service discovery delays.
    public func delays(connection: Duration, discovery: Duration) -> Self {
        with { $0.connectionDelay = connection; $0.discoveryDelay = discovery }
    }
    /// Adds a service, built by `build`.
    public func service(_ uuid: String, primary: Bool = true, _ build: (inout SimulatedService) -> Void = { _ in }) -> Self {
        var service = SimulatedService(uuid: BluetoothUUID.literal(uuid), primary: primary)
        build(&service)
        return with { $0.services.append(service) }
    }
    /// Sets the firmware.
    public func firmware(_ f: PeripheralFirmware) -> Self { with { $0.firmware = f } }
    /// How it pairs.
    public func pairing(_ p: SimulatedPairing) -> Self { with { $0.pairing = p } }
    /// Leaves the next `count` reads of `characteristic` unanswered. As bluetoothd does with a
    /// silent peer: the read and every GATT request after it wait; at the ATT transaction timeout
    /// (``SimulatorCore/attTimeout``, 30 s) they fail, and the ATT bearer is closed: every GATT
    /// call then fails with `Failed` "Not connected" while `Connected` stays true until the link
    /// drops, ``SimulatorCore/linkDropAfterATTTimeout`` later (unless `Disconnect` comes first).
    public func leavesReadsUnanswered(of characteristic: String, count: Int = 1) -> Self {
        with { $0.unansweredReads[BluetoothUUID.literal(characteristic)] = count }
    }

    /// Turns BLE privacy on (see ``usesPrivacy``): `address` becomes the identity address.
    public func privacy() -> Self { with { $0.usesPrivacy = true } }

    private func with(_ change: (inout Self) -> Void) -> Self {
        var copy = self
        change(&copy)
        return copy
    }
}

// MARK: - SimulatedService

/// A GATT service of a simulated peripheral.
public struct SimulatedService: Sendable {
    /// 128-bit UUID, lower case.
    public var uuid: String
    /// GattService1.Primary.
    public var primary: Bool
    /// The characteristics, in handle order.
    public var characteristics: [SimulatedCharacteristic] = []

    /// Adds a characteristic; `build` may add descriptors. A CCC descriptor (0x2902) is added
    /// automatically for notify/indicate characteristics, as every real peripheral has one.
    public mutating func characteristic(
        _ uuid: String, flags: [CharacteristicFlag], value: Data = Data(),
        _ build: (inout SimulatedCharacteristic) -> Void = { _ in }
    ) {
        var c = SimulatedCharacteristic(uuid: BluetoothUUID.literal(uuid), flags: flags, value: value)
        build(&c)
        characteristics.append(c)
    }
}

// MARK: - SimulatedCharacteristic

/// A GATT characteristic of a simulated peripheral.
public struct SimulatedCharacteristic: Sendable {
    /// 128-bit UUID, lower case.
    public var uuid: String
    /// GattCharacteristic1.Flags.
    public var flags: [CharacteristicFlag]
    /// The initial value.
    public var value: Data
    /// The descriptors (without the automatic CCC).
    public var descriptors: [SimulatedDescriptor] = []

    /// Adds a descriptor.
    public mutating func descriptor(_ uuid: String, flags: [String] = ["read"], value: Data = Data()) {
        descriptors.append(SimulatedDescriptor(uuid: BluetoothUUID.literal(uuid), flags: flags, value: value))
    }
}

/// A GATT descriptor of a simulated peripheral.
public struct SimulatedDescriptor: Sendable {
    /// 128-bit UUID, lower case.
    public var uuid: String
    /// GattDescriptor1.Flags.
    public var flags: [String]
    /// The initial value.
    public var value: Data
}

// MARK: - CharacteristicFlag

/// GattCharacteristic1.Flags values.
public enum CharacteristicFlag: String, Sendable, Codable, CaseIterable {
    /// `"broadcast"`.
    case broadcast
    /// `"read"`.
    case read
    /// `"write"` (with response).
    case write
    /// `"notify"`.
    case notify
    /// `"indicate"`.
    case indicate
    /// `"authorize"`.
    case authorize
    /// `"write-without-response"`.
    case writeWithoutResponse = "write-without-response"
    /// `"authenticated-signed-writes"`.
    case authenticatedSignedWrites = "authenticated-signed-writes"
    /// `"extended-properties"`.
    case extendedProperties = "extended-properties"
    /// `"reliable-write"`.
    case reliableWrite = "reliable-write"
    /// `"writable-auxiliaries"`.
    case writableAuxiliaries = "writable-auxiliaries"
    /// `"encrypt-read"`: reads need an encrypted link.
    case encryptRead = "encrypt-read"
    /// `"encrypt-write"`: writes need an encrypted link.
    case encryptWrite = "encrypt-write"
    /// `"encrypt-authenticated-read"`: reads need an authenticated (MITM-protected) link.
    case encryptAuthenticatedRead = "encrypt-authenticated-read"
    /// `"encrypt-authenticated-write"`: writes need an authenticated (MITM-protected) link.
    case encryptAuthenticatedWrite = "encrypt-authenticated-write"
    /// `"secure-read"`: reads need an LE Secure Connections link.
    case secureRead = "secure-read"
    /// `"secure-write"`: writes need an LE Secure Connections link.
    case secureWrite = "secure-write"
}
