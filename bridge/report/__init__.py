"""The versioned report schema bridge.report/1: records, JSON codec, JSON Schema."""
