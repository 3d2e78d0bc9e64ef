// What `import BlueCapKit` brings with it, so an application needs no other import:
// the futures it returns, the error BlueZ reports, the clock that times deadlines, and what an
// advertisement holds (`LocalAdvertisement`: plain values; its registration is `package`).
// No D-Bus type: a program reaches BlueZ through a `BluetoothSession`.
@_exported import Futures
@_exported import Timing
@_exported import struct BlueZ.BlueZError
@_exported import struct BlueZ.BlueZErrorKind
@_exported import struct BlueZ.ATTError
@_exported import struct BlueZ.LocalAdvertisement
