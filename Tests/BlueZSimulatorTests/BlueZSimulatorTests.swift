// BlueZSimulatorTests
