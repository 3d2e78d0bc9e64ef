// CentralHarness: the shared central rig (TestSupport.CentralRig) under this suite's names.
import BlueCapKit
import BlueZSimulator
import TestSupport

typealias CentralHarness = CentralRig

let accelerometerService = AccelerometerUUIDs.service
let accelerometerData = AccelerometerUUIDs.data
let accelerometerEnabled = AccelerometerUUIDs.enabled
let accelerometerPeriod = AccelerometerUUIDs.period

/// A simulated TI SensorTag with the accelerometer service.
func sensorTag(_ address: String, rssi: Int16 = -50, dataFlags: [CharacteristicFlag] = [.read, .notify]) -> SimulatedPeripheral {
    simulatedSensorTag(address, rssi: rssi, dataFlags: dataFlags)
}
