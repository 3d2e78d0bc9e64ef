// What `import BlueCapKit` brings with it, so an application needs no other import:
// the futures it returns, the error BlueZ reports, and the bus connection it may pass in
// (for instance one to a private bus running BlueZSimulator), and the clock that times deadlines.
@_exported import Futures
@_exported import Timing
@_exported import struct BlueZ.BlueZError
@_exported import struct BlueZ.BlueZErrorKind
@_exported import struct BlueZ.ATTError
@_exported import class DBus.Connection
@_exported import struct DBus.ObjectPath
