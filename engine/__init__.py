"""recallbench engine: transcripts -> sanitize -> chunks -> store -> scoped read API."""

__version__ = "0.1.0"
