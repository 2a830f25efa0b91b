"""The view of a report: what every format says, worded once (words)."""
