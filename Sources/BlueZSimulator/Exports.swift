// What `import BlueZSimulator` brings with it, so a test needs no other import: the private
// bus daemon and clean spawning (BlueCapTesting) and the clocks that time the simulation.
@_exported import BlueCapTesting
@_exported import Timing
