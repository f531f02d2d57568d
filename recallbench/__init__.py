"""recallbench."""
