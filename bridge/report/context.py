"""What a run measured with and on: the report's `settings` (how long and how
often, the seed) and `environment` (the machine bridge ran on).

Both are written back as they were read (codec `json_as_read`): a report of
an older bridge lacks settings added since, or the machine facts a collector
could not read, and keeps lacking them. A key this bridge does not know is
kept in `extra`, where it stood. None: not recorded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from bridge.report.codec import NONE, Record, jf


def _imported(record: Any, value: Any) -> bool:
    # A pasted `openssl speed` run was not measured by bridge: none of its settings.
    return record.imported_from is not None


@dataclass(frozen=True)
class RunSettings(Record):
    """The report's `settings`: bridge.settings.Settings as the run had them,
    the seed of its inputs; or, for `import-speed`, only the file it read.
    None: not recorded (an import's, a setting newer than the report), not
    written; `until_stable` and `tc_calls` are written as null when not used
    (as reports have always had them)."""

    warmup_ms: int | None = jf(omit=NONE, default=None)
    rewarm_ms: int | None = jf(omit=NONE, default=None)
    sample_ms: int | None = jf(omit=NONE, default=None)
    samples: int | None = jf(omit=NONE, default=None)
    rounds: int | None = jf(omit=NONE, default=None)
    openssl_seconds: int | None = jf(omit=NONE, default=None)
    openssl_runs: int | None = jf(omit=NONE, default=None)
    quick: bool = jf(omit=_imported, default=False)
    until_stable: float | None = jf(omit=_imported, default=None)
    max_seconds: int | None = jf(omit=NONE, default=None)
    ci_target: float | None = jf(omit=NONE, default=None)
    timeout_slack_s: float | None = jf(omit=NONE, default=None)
    tc_calls: int | None = jf(omit=_imported, default=None)
    schedulers: int | None = jf(omit=NONE, default=None)
    processes: int | None = jf(omit=NONE, default=None)
    user_timeout_s: float | None = jf(omit=NONE, default=None)
    memory_limit_mib: int | None = jf(omit=NONE, default=None)
    seed: int | None = jf(omit=NONE, default=None)
    imported_from: str | None = jf(omit=NONE, default=None)
    extra: dict[str, Any] = jf(flat=True, default_factory=dict)

    json_as_read: ClassVar[bool] = True

    @property
    def ci_goal(self) -> float | None:
        """The CI half-width a cell should reach: --until-stable's, else the
        run's own target."""
        return self.until_stable or self.ci_target


@dataclass(frozen=True)
class Environment(Record):
    """The report's `environment`: the machine bridge ran on, from small
    collectors that may each fail alone (bridge.system.environment); empty for
    an import. `features`: each hardware feature bridge knows, offered by the
    CPU or not (None: cannot tell)."""

    cpu_model: str | None = jf(omit=NONE, default=None)
    arch: str | None = jf(omit=NONE, default=None)
    cpu_count: int | None = jf(omit=lambda r, v: r.cpu_model is None, default=None)
    cpu_flags: tuple[str, ...] = jf(omit=lambda r, v: r.cpu_model is None, default=())
    virtualized: bool | None = jf(omit=lambda r, v: r.cpu_model is None, default=None)
    features: dict[str, bool | None] = jf(
        omit=lambda r, v: r.cpu_model is None, default_factory=dict
    )
    os: str | None = jf(omit=NONE, default=None)
    kernel: str | None = jf(omit=NONE, default=None)
    cpu_governor: str | None = jf(omit=NONE, default=None)
    turbo: bool | None = jf(omit=NONE, default=None)
    smt_siblings: tuple[tuple[int, ...], ...] | None = jf(omit=NONE, default=None)
    extra: dict[str, Any] = jf(flat=True, default_factory=dict)

    json_as_read: ClassVar[bool] = True

    @property
    def described(self) -> bool:
        """Whether the machine is described at all (an import's is not)."""
        return self != Environment()
