print("appstore-simulator: not built yet")
