"""Pasted `openssl speed` output: parse and import."""
