print("renewal-reconciler: not built yet")
