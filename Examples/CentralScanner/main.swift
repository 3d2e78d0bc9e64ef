print("central-scanner: not built yet")
