// DBus: Swift over libdbus.
