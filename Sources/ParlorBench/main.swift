print("parlor-bench: not yet")
