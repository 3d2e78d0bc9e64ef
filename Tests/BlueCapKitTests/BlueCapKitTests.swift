// BlueCapKitTests
