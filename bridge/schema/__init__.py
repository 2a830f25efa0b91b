"""The JSON Schemas bridge publishes and checks its files against (package
data: read through importlib.resources)."""
