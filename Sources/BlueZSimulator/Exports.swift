// What `import BlueZSimulator` brings with it, so a test needs no other import: the private
// bus daemon and clean spawning (BlueCapTesting) and the ATT code type its firmware answers with.
@_exported import BlueCapTesting
// What `import BlueZSimulator` brings with it: the clocks that time the simulation.
@_exported import Timing
