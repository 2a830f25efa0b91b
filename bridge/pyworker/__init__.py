"""The Python worker process and its closed set of operations."""
