"""The values of closed sets the view reads, named once here so that the
view imports no analysis: what a difference is against, its significance
(bridge.report.findings), where an output check's reference came from."""

from __future__ import annotations

from bridge.report.findings import Significance, Verdict

# Difference.against
FIRST, FASTEST, NEIGHBOUR = "first-named", "fastest", "neighbour"
# Difference.verdict (and a comparison row's)
FASTER, SLOWER, NOISE = Significance.FASTER, Significance.SLOWER, Significance.NOISE
UNRESOLVED, UNKNOWN = Significance.UNRESOLVED, Significance.UNKNOWN
FEW, UNEQUAL = Significance.FEW, Significance.UNEQUAL_LOAD
SIGNIFICANT = (FASTER, SLOWER)
MARGIN = 0.03  # a difference between cells must clear ±3% (bridge.analysis.versus.MARGIN)

# InteropCheck.reference_from
FROM_AGREEMENT = "agreement between the runtimes (no reference here)"
FROM_EC = "the driver (bridge.ec, pure Python ECDSA)"
FROM_OWN = "the driver's own checks (bridge.rsa, bridge.curve25519, bridge.ec: pure Python)"

# Decomposition.method
BY_DIFFERENCE = "by difference"

# HwVerdict.verdict
USED, NOT_USED = Verdict.USED, Verdict.NOT_USED

# A level cell's CI needs this many windows.
MIN_FOR_CI = 3
