print("accelerometer-peripheral: not built yet")
