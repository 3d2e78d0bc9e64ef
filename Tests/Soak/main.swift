print("soak placeholder")
