// central-scanner: scan for BLE devices, or stream a TI SensorTag's accelerometer.
// See ScannerOptions.usage or README.md.

import Foundation
#if canImport(Glibc)
import Glibc
import ExampleSupport
#endif

exit(await ScannerCommand.run(Array(CommandLine.arguments.dropFirst())))
