// BLEUUID parsing and the BlueZ Flags mapping.

import Foundation
import Testing
@testable import BlueCapKit

@Suite("BLEUUID")
struct BLEUUIDTests {
    @Test("16-bit forms expand with the Bluetooth base UUID, in any case and with 0x")
    func shortForms() throws {
        let battery = try BLEUUID(parsing: "2A19")
        #expect(battery.uuidString == "00002a19-0000-1000-8000-00805f9b34fb")
        #expect(battery.shortString == "2A19")
        #expect(battery.shortValue == 0x2A19)
        #expect(BLEUUID(string: "2a19") == battery)
        #expect(BLEUUID(string: "0x2A19") == battery)
        #expect(BLEUUID(string: "00002A19-0000-1000-8000-00805F9B34FB") == battery)
        #expect(BLEUUID(shortValue: 0x2A19) == battery)
        #expect(battery.description == "2A19")
    }

    @Test("32-bit forms expand and keep an 8-digit short string")
    func thirtyTwoBit() {
        let uuid = BLEUUID(string: "1234ABCD")
        #expect(uuid?.uuidString == "1234abcd-0000-1000-8000-00805f9b34fb")
        #expect(uuid?.shortString == "1234ABCD")
        #expect(uuid?.shortValue == nil)
        #expect(BLEUUID(string: "0000180F")?.shortString == "180F")
    }

    @Test("128-bit vendor UUIDs are canonical lowercase and have no short form")
    func vendor() {
        let uuid = BLEUUID(string: "F000AA11-0451-4000-B000-000000000000")
        #expect(uuid?.uuidString == "f000aa11-0451-4000-b000-000000000000")
        #expect(uuid?.shortString == nil)
        #expect(uuid == BLEUUID(string: "f000aa1104514000b000000000000000"))
        #expect(uuid == TISensorTag.uuid(0xAA11))
        #expect(uuid.map { BLEUUID($0.uuid) } == uuid)
        #expect(uuid?.uuid == UUID(uuidString: "F000AA11-0451-4000-B000-000000000000"))
    }

    @Test("garbage is rejected with nil and a typed error")
    func garbage() {
        for text in ["", "2A1", "2A19F", "XYZW", "F000AA11-0451-4000-B000-00000000000", "F000AA11-0451-4000-B000-0000000000000",
                     "F000AA1-10451-4000-B000-000000000000", "F000AA11+0451-4000-B000-000000000000", "0x", "2A-9",
                     "F000AA11-0451-4000-B000-00000000000G"] {
            #expect(BLEUUID(string: text) == nil, "\(text)")
        }
        #expect(throws: BLEUUIDError.invalid("nope")) { try BLEUUID(parsing: "nope") }
    }

    @Test("string literals, hashing and ordering follow the 128-bit value")
    func literalsAndHashing() {
        let a: BLEUUID = "180F"
        let b: BLEUUID = "0000180f-0000-1000-8000-00805f9b34fb"
        #expect(Set([a, b]).count == 1)
        #expect(BLEUUID(shortValue: 0x1800) < BLEUUID(shortValue: 0x180F))
        #expect(BLEUUID(bigEndianBytes: a.bigEndianBytes) == a)
        #expect(BLEUUID(bigEndianBytes: [UInt8](repeating: 0, count: 15)) == nil)
    }
}

@Suite("BlueZ characteristic Flags")
struct CharacteristicFlagsTests {
    @Test("every property maps to its BlueZ flag and back")
    func propertiesBothWays() {
        let expected: [(CharacteristicProperties, String)] = [
            (.broadcast, "broadcast"), (.read, "read"), (.writeWithoutResponse, "write-without-response"),
            (.write, "write"), (.notify, "notify"), (.indicate, "indicate"),
            (.authenticatedSignedWrites, "authenticated-signed-writes"), (.extendedProperties, "extended-properties"),
            (.reliableWrite, "reliable-write"), (.writableAuxiliaries, "writable-auxiliaries"),
        ]
        for (property, flag) in expected {
            #expect(property.bluezFlags == [flag])
            #expect(CharacteristicProperties(bluezFlags: [flag]) == property)
        }
        let all = CharacteristicProperties(expected.map(\.0))
        #expect(CharacteristicProperties(bluezFlags: all.bluezFlags) == all)
        #expect(all.bluezFlags.count == 10)
    }

    @Test("security flags imply their operation and set permissions")
    func securityFlags() {
        let parsed = CharacteristicFlags.parse(["encrypt-read", "secure-write", "encrypt-authenticated-notify", "authorize", "future-flag"])
        #expect(parsed.properties == [.read, .write, .notify])
        #expect(parsed.permissions == [.readable, .writeable, .readEncryptionRequired, .writeSecureConnectionRequired, .authorize])
        #expect(parsed.unknown == ["future-flag"])
        #expect(CharacteristicPermissions(bluezFlags: ["read", "write-without-response"]) == [.readable, .writeable])
        #expect(CharacteristicPermissions(bluezFlags: ["encrypt-authenticated-read"]) == [.readable, .readAuthenticationRequired])
        #expect(CharacteristicPermissions(bluezFlags: ["notify"]) == [])
    }

    @Test("exported Flags list properties then the security flags their operations need")
    func exportFlags() {
        let flags = CharacteristicFlags.bluezFlags(
            properties: [.read, .write, .notify],
            permissions: [.readable, .writeable, .readEncryptionRequired, .writeEncryptionRequired])
        #expect(flags == ["read", "write", "notify", "encrypt-read", "encrypt-write"])
        let readOnly = CharacteristicFlags.bluezFlags(properties: [.read], permissions: [.readable, .writeEncryptionRequired])
        #expect(readOnly == ["read"])
        let parsed = CharacteristicFlags.parse(flags)
        #expect(parsed.properties == [.read, .write, .notify])
        #expect(parsed.permissions == [.readable, .writeable, .readEncryptionRequired, .writeEncryptionRequired])
        #expect(parsed.unknown.isEmpty)
    }
}
