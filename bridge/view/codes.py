"""The strings reports hold for closed sets the view reads: what a
difference is against, its significance, where an output check's reference
came from. They are the report's values (old reports hold them too), named
once here so that the view imports no analysis."""

from __future__ import annotations

# Difference.against
FIRST, FASTEST, NEIGHBOUR = "first-named", "fastest", "neighbour"
# Difference.verdict (and a comparison row's)
FASTER, SLOWER, NOISE = "faster", "slower", "within noise"
UNRESOLVED, UNKNOWN = "unresolved", "unknown (no samples)"
FEW, UNEQUAL = "too few samples", "unequal load"
SIGNIFICANT = (FASTER, SLOWER)
DRIFT = ": drift"  # how the note of a difference the rounds contradict ends
MIN_ROUNDS = 3  # rounds with samples on both sides a difference needs
MARGIN = 0.03  # a difference between cells must clear ±3%

# InteropCheck.reference_from
FROM_AGREEMENT = "agreement between the runtimes (no reference here)"
FROM_EC = "the driver (bridge.ec, pure Python ECDSA)"
FROM_OWN = "the driver's own checks (bridge.rsa, bridge.curve25519, bridge.ec: pure Python)"

# Decomposition.method
BY_DIFFERENCE = "by difference"

# HwVerdict.verdict
USED, NOT_USED = "used", "not-used"

# A level cell's CI needs this many windows.
MIN_FOR_CI = 3


def is_drift(note: str) -> bool:
    return note.endswith(DRIFT)
