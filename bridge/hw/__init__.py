"""CPU features, the masks that switch them off, the A/B and its verdicts."""
