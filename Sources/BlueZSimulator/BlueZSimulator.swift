// BlueZSimulator: a simulated bluetoothd.
