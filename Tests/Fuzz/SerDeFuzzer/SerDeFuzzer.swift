// SerDeFuzzer: arbitrary bytes through every Deserializable type, the Heart Rate measurement
// and the iBeacon parser. Built with `-sanitize=fuzzer` (and -DFUZZING) it is a libFuzzer target;
// otherwise it replays corpus files or directories given on the command line.
import BlueCapKit
import Foundation
import FuzzSupport

// MARK: - Invariants

/// A decoded value, re-encoded, decodes to the same value (the encoding is a fixed point).
func checkRoundTrip<T: Deserializable & Equatable>(_ type: T.Type, _ data: Data) {
    guard let value = try? T(deserializing: data) else { return }
    let again = value.serialized()
    guard let back = try? T(deserializing: again) else { fatalError("\(T.self): re-encoding \(again as NSData) of \(value) does not decode") }
    if back != value { fatalError("\(T.self): \(value) → \(again as NSData) → \(back)") }
    if let size = T.encodedSize, again.count != size { fatalError("\(T.self): encodedSize \(size) but \(again.count) bytes") }
}

/// Same for types that also have a string form: the string form parses back.
func checkStrings<T: Deserializable & StringDeserializable & Equatable>(_ type: T.Type, _ data: Data) {
    checkRoundTrip(T.self, data)
    guard let value = try? T(deserializing: data) else { return }
    _ = T(stringValue: value.stringValue)
}

/// Floats: NaN payloads make `==` useless; compare bit patterns of the re-encoding instead.
func checkBits<T: Deserializable>(_ type: T.Type, _ data: Data) {
    guard let value = try? T(deserializing: data) else { return }
    if value.serialized() != data { fatalError("\(T.self): \(data as NSData) re-encodes as \(value.serialized() as NSData)") }
}

// MARK: - One input

/// Runs one input through every decoder. The first byte picks nothing: every decoder sees the
/// whole input, and the fixed-width ones also see each prefix of their size.
func fuzzSerDe(_ data: Data) {
    checkRoundTrip(UInt8.self, data); checkRoundTrip(Int8.self, data)
    checkRoundTrip(UInt16.self, data); checkRoundTrip(Int16.self, data)
    checkRoundTrip(UInt32.self, data); checkRoundTrip(Int32.self, data)
    checkRoundTrip(UInt64.self, data); checkRoundTrip(Int64.self, data)
    checkBits(Float.self, data); checkBits(Double.self, data)
    checkRoundTrip(MedFloat16.self, data); checkRoundTrip(MedFloat32.self, data)
    _ = try? String(deserializing: data)
    checkRoundTrip(GATTDateTime.self, data)
    typealias HR = BLESIGGATT.HeartRateService
    checkStrings(HR.Measurement.self, data)
    checkStrings(HR.BodySensorLocation.self, data)
    checkStrings(HR.ControlPoint.self, data)
    checkStrings(BLESIGGATT.BatteryService.Level.self, data)
    checkStrings(BLESIGGATT.CurrentTimeService.CurrentTime.self, data)
    checkStrings(BLESIGGATT.HealthThermometerService.TemperatureMeasurement.self, data)
    checkStrings(TISensorTag.AccelerometerService.Data.self, data)
    checkStrings(TISensorTag.AccelerometerService.Enabled.self, data)
    checkStrings(TISensorTag.AccelerometerService.UpdatePeriod.self, data)
    checkStrings(TISensorTag.TemperatureService.Data.self, data)
    checkStrings(TISensorTag.HumidityService.Data.self, data)
    checkStrings(TISensorTag.MagnetometerService.Data.self, data)
    checkStrings(TISensorTag.GyroscopeService.Data.self, data)
    checkStrings(TISensorTag.GyroscopeService.Enabled.self, data)
    _ = SerDe.deserialize(data, as: [UInt16].self)
    _ = SerDe.deserialize(data, as: [Int32].self)
    for offset in [0, 1, 3, data.count - 1, data.count] { _ = try? SerDe.decode(UInt32.self, from: data, at: offset) }
    var reader = ByteReader(data, for: Data.self)
    while (try? reader.read(UInt16.self)) != nil {}
    _ = try? reader.expectEnd()
    // iBeacon: the full manufacturer data and the specific part, and a round trip of what parses.
    if let beacon = BeaconRegion(manufacturerData: data) {
        if BeaconRegion(manufacturerData: beacon.manufacturerData) != beacon { fatalError("iBeacon round trip: \(beacon)") }
    }
    if let beacon = BeaconRegion(manufacturerSpecificData: data) {
        if BeaconRegion(manufacturerSpecificData: beacon.manufacturerSpecificData) != beacon { fatalError("iBeacon specific-data round trip: \(beacon)") }
    }
    _ = SerDe.data(hexString: String(decoding: data, as: UTF8.self))
}

// MARK: - Entry points

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    fuzzSerDe(Data(bytes: bytes, count: size))
    return 0
}

/// With libFuzzer (-DFUZZING): libFuzzer's driver. Without: replays the files (or directories
/// of files) named on the command line.
@main
struct SerDeFuzzerMain {
    static func main() {
        FuzzerDriver.run(name: "SerDeFuzzer", arguments: Array(CommandLine.arguments.dropFirst()), target: fuzz) { fuzzSerDe($0) }
    }
}
