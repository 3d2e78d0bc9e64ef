// swift-tools-version: 6.0
// BlueCap for Linux: Bluetooth Low Energy central and peripheral roles for Swift on Linux,
// through BlueZ's D-Bus API, with a futures interface and async/await.
import PackageDescription

let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]

let package = Package(
    name: "BlueCap",
    products: [
        .library(name: "BlueCapKit", targets: ["BlueCapKit"]),
        .library(name: "BlueZSimulator", targets: ["BlueZSimulator"]),
        // A private dbus-daemon and clean process spawning for tests (re-exported by BlueZSimulator).
        .library(name: "BlueCapTesting", targets: ["BlueCapTesting"]),
        .executable(name: "bluez-sim", targets: ["bluez-sim"]),
        .executable(name: "bluez-record", targets: ["bluez-record"]),
        .executable(name: "central-scanner", targets: ["CentralScanner"]),
        .executable(name: "accelerometer-peripheral", targets: ["AccelerometerPeripheral"]),
        .executable(name: "ble-gateway", targets: ["BLEGateway"]),
        .executable(name: "bluecap-bench", targets: ["bluecap-bench"]),
    ],
    targets: [
        // Layer 1: libdbus, header shim only.
        .systemLibrary(
            name: "CDBus",
            pkgConfig: "dbus-1",
            providers: [.apt(["libdbus-1-dev"])]
        ),
        // Layer 0: the package's one lock (a pthread mutex ThreadSanitizer sees), used by every module.
        .target(name: "Locking", swiftSettings: strict),
        // Layer 0: the one clock (system and manual) timing every deadline of the library and the simulator.
        .target(name: "Timing", dependencies: ["Locking"], swiftSettings: strict),
        // Layer 2: Swift over libdbus. The only module that imports CDBus.
        .target(name: "DBus", dependencies: ["CDBus", "Locking"], swiftSettings: strict),
        // Layer 3: org.bluez proxies, object tree, errors, exported GATT app and advertisements.
        .target(name: "BlueZ", dependencies: ["DBus", "Locking", "Timing"], swiftSettings: strict),
        // Layer 4: futures. Depends on nothing of ours but the lock.
        .target(name: "Futures", dependencies: ["Locking", "Timing"], swiftSettings: strict),
        // Layer 5: the public API.
        .target(name: "BlueCapKit", dependencies: ["BlueZ", "Futures", "Locking", "Timing"], swiftSettings: strict),
        // Test tooling: a private dbus-daemon (BusDaemon) and signal-clean spawning (CleanSpawn).
        // CSpawn: fork + exec with a parent-death signal, which posix_spawn cannot set, and pidfd_open.
        .target(name: "CSpawn"),
        .target(name: "BlueCapTesting", dependencies: ["CSpawn"], swiftSettings: strict),
        // A simulated bluetoothd for tests (ours and users').
        .target(name: "BlueZSimulator", dependencies: ["DBus", "BlueZ", "BlueCapKit", "Locking", "Timing", "BlueCapTesting"], swiftSettings: strict),
        .executableTarget(name: "bluez-sim", dependencies: ["BlueZSimulator"], swiftSettings: strict),
        // Records one process's org.bluez traffic (a bus monitor) into a BlueZScenario file.
        .executableTarget(name: "bluez-record", dependencies: ["BlueZSimulator", "DBus", "CDBus"], swiftSettings: strict),
        // Examples: the code both programs share (the accelerometer central and peripheral, the
        // console, option parsing, the simulated world), then the two programs. They use only the
        // products BlueCapKit and BlueZSimulator, as a user's package would
        // (Scripts/examples-as-package builds them as one).
        .target(
            name: "ExampleSupport", dependencies: ["BlueCapKit", "BlueZSimulator"],
            path: "Examples/ExampleSupport", swiftSettings: strict),
        .executableTarget(
            name: "CentralScanner", dependencies: ["BlueCapKit", "BlueZSimulator", "ExampleSupport"],
            path: "Examples/CentralScanner", swiftSettings: strict),
        .executableTarget(
            name: "AccelerometerPeripheral", dependencies: ["BlueCapKit", "BlueZSimulator", "ExampleSupport"],
            path: "Examples/AccelerometerPeripheral", swiftSettings: strict),
        // The third example, a BLE-to-MQTT gateway: libmosquitto through a system-library target
        // that only the gateway uses (a product depending on BlueCapKit never pulls it in),
        // the gateway itself (GatewayCore, also driven by its tests) and the program.
        .systemLibrary(
            name: "CMosquitto", path: "Examples/CMosquitto",
            pkgConfig: "libmosquitto",
            providers: [.apt(["libmosquitto-dev"])]
        ),
        .target(
            name: "GatewayCore", dependencies: ["BlueCapKit", "BlueZSimulator", "ExampleSupport", "CMosquitto"],
            path: "Examples/GatewayCore", swiftSettings: strict),
        .executableTarget(
            name: "BLEGateway", dependencies: ["GatewayCore"],
            path: "Examples/BLEGateway", swiftSettings: strict),
        // Benchmarks.
        .executableTarget(
            name: "bluecap-bench", dependencies: ["BlueCapKit", "BlueZSimulator", "DBus", "Futures", "CDBus", "Locking"],
            path: "Benchmarks/Sources/bluecap-bench", swiftSettings: strict),
        // Tests. TestSupport: private dbus-daemon, process helpers and the central rig (bus +
        // simulator + manager) shared by the bus tiers and the soak.
        .target(name: "TestSupport", dependencies: ["DBus", "BlueCapKit", "BlueZSimulator", "Locking", "BlueCapTesting"],
                path: "Tests/TestSupport", swiftSettings: strict),
        .testTarget(name: "DBusTests", dependencies: ["DBus", "TestSupport", "Locking", "BlueCapTesting"], swiftSettings: strict),
        .testTarget(name: "TimingTests", dependencies: ["Timing", "Locking"], swiftSettings: strict),
        .testTarget(name: "FuturesTests", dependencies: ["Futures", "Locking", "Timing"], swiftSettings: strict),
        .testTarget(name: "BlueZTests", dependencies: ["BlueZ", "TestSupport", "BlueZSimulator", "Locking"], swiftSettings: strict),
        .testTarget(name: "BlueCapKitTests", dependencies: ["BlueCapKit", "TestSupport", "BlueZSimulator", "Locking"], swiftSettings: strict),
        .testTarget(name: "BlueZSimulatorTests", dependencies: ["BlueZSimulator", "BlueCapKit", "DBus", "TestSupport", "Locking"],
                    exclude: ["Scenarios"], swiftSettings: strict),
        // GatewayCore: the ble-gateway tests drive the program against a real mosquitto and watch it
        // with the example's own MQTT client.
        .testTarget(name: "IntegrationTests", dependencies: ["BlueCapKit", "BlueZSimulator", "TestSupport", "Locking", "GatewayCore"],
                    exclude: ["Recordings"], swiftSettings: strict),
        // Reliability: the faults BLE-on-Linux users hit, as bus-tier tests (issue 11).
        .testTarget(name: "ReliabilityTests", dependencies: ["BlueCapKit", "BlueZSimulator", "TestSupport", "Locking"], swiftSettings: strict),
        // Fuzz targets: libFuzzer entry points under `make fuzz`; a corpus replayer otherwise.
        // FuzzSupport: the driver and corpus replay they share.
        .target(name: "FuzzSupport", path: "Tests/Fuzz/FuzzSupport", swiftSettings: strict),
        .executableTarget(name: "DBusMessageFuzzer", dependencies: ["DBus", "BlueZ", "FuzzSupport"],
                          path: "Tests/Fuzz/DBusMessageFuzzer", swiftSettings: strict),
        .executableTarget(name: "SerDeFuzzer", dependencies: ["BlueCapKit", "FuzzSupport"],
                          path: "Tests/Fuzz/SerDeFuzzer", swiftSettings: strict),
        .executableTarget(name: "ExportedObjectFuzzer", dependencies: ["DBus", "BlueZ", "BlueCapTesting", "Locking", "FuzzSupport"],
                          path: "Tests/Fuzz/ExportedObjectFuzzer", swiftSettings: strict),
        // Soak: long connect/scan cycles with RSS and fd sampling (`make soak`).
        .executableTarget(name: "bluecap-soak", dependencies: ["BlueCapKit", "BlueZSimulator", "TestSupport", "Locking"],
                          path: "Tests/Soak", swiftSettings: strict),
        // Real BlueZ (Scripts/bluez-vm): skipped unless BLUECAP_VM=1, run inside the VM by test-vm.
        .testTarget(name: "VMTests", dependencies: ["BlueCapKit", "TestSupport", "Locking"], swiftSettings: strict),
    ]
)
