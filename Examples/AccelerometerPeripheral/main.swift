// accelerometer-peripheral: a TI SensorTag accelerometer served over BlueZ (peripheral role).
// See PeripheralOptions.usage or README.md.

import Foundation
#if canImport(Glibc)
import Glibc
import ExampleSupport
#endif

exit(await PeripheralCommand.run(Array(CommandLine.arguments.dropFirst())))
