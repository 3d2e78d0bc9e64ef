print("bluecap-bench: no benchmarks yet")
