"""Pure functions over results: stability, fits, comparisons, upgrades, noise."""
