// What `import BlueZSimulator` brings with it: the clocks that time the simulation.
@_exported import Timing
