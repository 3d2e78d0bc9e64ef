// ATTError+Replies: how the simulated bluetoothd carries ATT error codes over D-Bus.

@_exported import struct BlueZ.ATTError

extension ATTError {
    /// The D-Bus error bluetoothd's GATT client replies with when the peer answers this code
    /// (src/gatt-client.c create_gatt_dbus_error).
    public var clientReply: BlueZErrorReply {
        switch code {
        case 0x02: .notPermitted("Read not permitted")
        case 0x03: .notPermitted("Write not permitted")
        case 0x05, 0x0f, 0x0c: .notPermitted("Not paired")
        case 0x07: .invalidArguments("Invalid offset")
        case 0x0d: .invalidArguments("Invalid Length")
        case 0x08: .notAuthorized
        case 0x06: .notSupported
        case 0x00: .failed("Operation failed")
        default: .failed("Operation failed with ATT error: 0x" + [code].hexString)
        }
    }

    /// The ATT code bluetoothd's GATT server answers when a local application replies to a
    /// read/write with the D-Bus error `reply` (src/gatt-database.c dbus_error_to_att_ecode).
    /// `permissionError` is the code used for NotPermitted (read or write not permitted).
    public static func fromApplication(_ reply: BlueZErrorReply, permissionError: ATTError) -> ATTError {
        ATTError(applicationReply: reply.name, message: reply.message, permissionError: permissionError)
    }
}
