// BlueCapKit: the public BLE API.
