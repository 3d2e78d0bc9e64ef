// bluez-sim: the BlueZSimulator on a D-Bus bus.
