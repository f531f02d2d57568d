"""harness."""
