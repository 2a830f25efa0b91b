"""The two meanings of "hw": a cell's state and a run's mode.

A cell ran either on the machine as found (`Hw.ON`) or with its scenario's
hardware features masked from process start (`Hw.OFF`, bridge.hw.ab). A run
asks for one of those or for both, an A/B with verdicts (`HwMode`: --hw, the
report's `hardware.hw`). Both are str enums (bridge.catalog.choice): a member
is the str it names, so reports write the same JSON as before.
"""

from __future__ import annotations

from bridge.catalog.choice import Choice


class Hw(Choice):
    """A cell's state: the machine as found, or the features masked."""

    ON = "on"
    OFF = "off"

    @property
    def masked(self) -> bool:
        return self is Hw.OFF


class HwMode(Choice):
    """What a run measures: the cells as found (on), only their masked twins
    (off), or both, paired into hardware verdicts."""

    ON = "on"
    OFF = "off"
    BOTH = "both"

    @classmethod
    def default(cls, names_features: bool) -> HwMode:
        """Without --hw: the A/B when a scenario names a feature to mask."""
        return cls.BOTH if names_features else cls.ON

    @property
    def masks(self) -> bool:
        """Whether the run starts masked twins (off or both)."""
        return self is not HwMode.ON

    @property
    def as_found(self) -> bool:
        """Whether the run measures the machine as found (on or both)."""
        return self is not HwMode.OFF

    @property
    def states(self) -> tuple[Hw, ...]:
        """The cell states a maskable runtime runs, as found first."""
        return (Hw.ON, Hw.OFF) if self is HwMode.BOTH else (Hw(self.value),)

    @property
    def levels_state(self) -> Hw:
        """The state concurrency levels run in: as found, except with --hw
        off, where only the masked twin runs."""
        return Hw.OFF if self is HwMode.OFF else Hw.ON
