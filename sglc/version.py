"""The version of sglc (one place; sglc.__version__ re-exports it)."""

__version__ = "0.1.0"
