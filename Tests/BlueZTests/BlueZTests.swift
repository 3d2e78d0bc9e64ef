// BlueZTests
