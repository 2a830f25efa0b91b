"""Tests that need a quiet machine, and what they do on a busy one (issue 35).

A test that judges a measured effect judges it on what load does not
inflate (CPU time per call, paired rounds, counts the procedure
guarantees). Where a part of it cannot be judged that way (a verdict word
that today's verdicts withhold on a busy machine, a throughput), it says
so, and the machine is measured as bridge measures it
(bridge.analysis.quietness.Conditions: other processes' CPU, steal, a
thread's wait for a CPU):

- `@pytest.mark.quiet`: before the test, a thread spins for WINDOW_S while
  /proc is read on either side (bridge.analysis.noise.snapshot); a busy
  machine skips the test, naming the figures. A test that passed that check
  and then fails while the machine became busy (other processes' CPU over
  the test, read the same way) is reported skipped too, with its failure.
- `with unless_busy(report, ...)`: around the part of a test that a busy
  machine can make fail, after a run: a failure there, when the report's
  own noise block says the machine was busy, is a busy skip with the
  figures and the failure; what the test asserted before it (CPU time) has
  been judged either way.

Neither is silent: the skip's reason names the figures, and the terminal
summary counts these skips on their own line. BRIDGE_BUSY_SKIP sets the
policy: `skip` (the default, on a CI runner too: a shared runner is often
busy, and `make test` must pass there), `fail` (for a runner known to be
quiet: a busy one is then a failure that says so) or `run` (no check: run
them whatever the load, to see what it does)."""

from __future__ import annotations

import contextlib
import enum
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from bridge.analysis import noise, quietness
from bridge.report import schema
from bridge.system import cpustat

# The check's window: long enough for /proc/stat's ticks (100 a second) to
# say a quarter of a CPU, short enough that a serial pass of about thirty
# such tests spends 15 s on it.
WINDOW_S = 0.5
PREFIX = "machine busy"
ENV = "BRIDGE_BUSY_SKIP"
MARKER = "quiet"
_DURING = pytest.StashKey[noise.Snapshot]()


class Policy(enum.Enum):
    SKIP = "skip"
    FAIL = "fail"
    RUN = "run"


def policy(env: Mapping[str, str] = os.environ) -> Policy:
    """BRIDGE_BUSY_SKIP, or its default, skip."""
    given = env.get(ENV, "").strip().lower()
    if not given:
        return Policy.SKIP
    try:
        return Policy(given)
    except ValueError:
        raise pytest.UsageError(
            f"{ENV}={given!r}: expected one of {', '.join(p.value for p in Policy)}"
        ) from None


@dataclass(frozen=True)
class Reading:
    """The machine over a span, and what the span was (for the reason)."""

    conditions: quietness.Conditions
    span: str  # "a 0.5 s check", "the test (12.3 s)", "the run"

    @property
    def busy(self) -> bool:
        return quietness.busy(self.conditions, self.conditions.cpus or os.cpu_count() or 1)

    def reason(self) -> str:
        c = self.conditions
        cpus = c.cpus or os.cpu_count() or 1
        parts = []
        if c.others_cpus is not None:
            parts.append(f"other processes used {c.others_cpus:.1f} of {cpus} CPUs")
        if c.load is not None:
            parts.append(f"load {c.load:.1f}")
        if c.steal is not None:
            parts.append(f"steal {c.steal:.0%}")
        if c.wait is not None:
            parts.append(f"waiting for a CPU {c.wait:.0%}")
        return f"{PREFIX} over {self.span}: {', '.join(parts) or 'no figures'}"


def spin_check(seconds: float = WINDOW_S) -> Reading:
    """A thread spins for `seconds`: others' CPU and steal from /proc/stat
    around it (this process's own time, the spin's, left out), and the
    share of the span the spinning thread waited for a CPU (its schedstat)."""
    stat = cpustat.open_self()
    try:
        wait0 = stat.read()[1] if stat else 0
        before = noise.snapshot()
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            pass
        after = noise.snapshot()
        waited = stat.read()[1] - wait0 if stat else None
    finally:
        if stat:
            stat.close()
    use = noise.usage(before, after, os.cpu_count())
    wait = None if waited is None or use.seconds <= 0 else min(1.0, waited / 1e9 / use.seconds)
    return Reading(_conditions(use, wait), f"a {seconds:g} s check")


def during(before: noise.Snapshot, span: str) -> Reading:
    """The machine since `before` (others' CPU, steal; no thread's wait)."""
    return Reading(_conditions(noise.usage(before, noise.snapshot(), os.cpu_count()), None), span)


def _conditions(use: noise.Usage, wait: float | None) -> quietness.Conditions:
    loads = [x[0] for x in (use.load_before, use.load_after) if x]
    return quietness.Conditions(
        cpus=use.cpus,
        load=max(loads) if loads else None,
        others_cpus=use.others_cpus,
        steal=use.steal,
        wait=wait,
    )


def of_report(report: schema.Report | str | Path) -> Reading | None:
    """What a report recorded of its machine during the run (None: nothing)."""
    if not isinstance(report, schema.Report):
        report = schema.load(report)
    c = quietness.conditions(report)
    return None if c is None else Reading(c, "the run")


def act(reading: Reading, needs: str, chosen: Policy | None = None) -> None:
    """Skip (or fail, by the policy) when the reading says busy; `needs`:
    what the test would have judged, in words."""
    chosen = chosen or policy()
    if chosen is Policy.RUN or not reading.busy:
        return
    said = f"{reading.reason()}; {needs} needs a quiet machine"
    if chosen is Policy.FAIL:
        pytest.fail(f"{said} ({ENV}=fail: set {ENV}=skip to skip instead)", pytrace=False)
    # At the test's own place in the short summary, not this line's.
    raise pytest.skip.Exception(said, _use_item_location=True)


@contextlib.contextmanager
def unless_busy(*reports: schema.Report | str | Path, needs: str = "the verdict"):
    """Around the part of a test that a busy machine can make fail (a
    verdict word that today's verdicts withhold under load): an assertion
    that fails there, after a run whose report says the machine was busy
    (its own noise block: others' CPU, steal, the cells' wait for a CPU),
    is a busy skip naming the figures and the failure (by the policy: under
    `fail` it stays a failure, with the figures beside it). On a quiet
    run, or one that passes, it changes nothing."""
    try:
        yield
    except AssertionError as exc:
        chosen = policy()
        readings = [r for r in map(of_report, reports) if r is not None and r.busy]
        if not readings or chosen is Policy.RUN:
            raise
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        said = f"{readings[0].reason()}; {needs} needs a quiet machine, and it failed: {first}"
        if chosen is Policy.FAIL:
            if hasattr(exc, "add_note"):  # Python 3.11
                exc.add_note(f"({said})")
            raise
        raise pytest.skip.Exception(said, _use_item_location=True) from exc


# -- the plugin (registered by tests/conftest.py) ----------------------------------


class Plugin:
    """The marker's check before a test, a failure on a machine that became
    busy during it, and the summary's count of busy skips."""

    def __init__(self) -> None:
        policy()  # a bad BRIDGE_BUSY_SKIP stops the session at once
        self.skipped: list[tuple[str, str]] = []  # (test, reason), in order

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        # A test that needs a quiet machine measures: it must not share the
        # machine with the other pass's sessions.
        loose = [
            i.nodeid
            for i in items
            if i.get_closest_marker(MARKER) and i.get_closest_marker("serial") is None
        ]
        if loose:
            raise pytest.UsageError(f"marked {MARKER} but not serial: {', '.join(loose)}")

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        mark = item.get_closest_marker(MARKER)
        if mark is not None and policy() is not Policy.RUN:
            act(spin_check(), mark.kwargs.get("needs", "this test"))

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item: pytest.Item):
        if item.get_closest_marker(MARKER) is not None:
            item.stash[_DURING] = noise.snapshot()
        yield

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo):
        outcome = yield
        report = outcome.get_result()
        before = item.stash.get(_DURING, None)
        if call.when != "call" or not report.failed or before is None:
            return
        if policy() is not Policy.SKIP:
            return
        reading = during(before, f"the test ({call.duration:.1f} s)")
        if not reading.busy:
            return
        # It passed the check before it began, then the machine became busy:
        # its failure says nothing of bridge. Reported as a busy skip, with
        # the failure's first line, never dropped.
        lines = str(report.longrepr).strip().splitlines()
        first = next(
            (x[1:].strip() for x in lines if x.startswith("E ")), lines[-1] if lines else ""
        )
        report.outcome = "skipped"
        report.longrepr = (
            str(item.path),
            item.location[1] + 1 if item.location[1] is not None else 0,
            f"Skipped: {reading.reason()}, and it failed: {first[:200]}",
        )

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        reason = busy_reason(report)
        if reason:
            self.skipped.append((report.nodeid, reason))

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if not self.skipped:
            return
        n = len(self.skipped)
        terminalreporter.write_line(
            f"{n} test{'s' if n != 1 else ''} skipped because the machine was busy"
            f" ({ENV}=fail makes it a failure, {ENV}=run runs them anyway):",
            yellow=True,
        )
        for nodeid, reason in self.skipped:
            terminalreporter.write_line(f"  {nodeid}: {reason}")


def busy_reason(report: pytest.TestReport) -> str:
    """The reason of a skip for a busy machine; "" for any other report."""
    if not report.skipped or not isinstance(report.longrepr, tuple | list):
        return ""
    reason = str(report.longrepr[2]).removeprefix("Skipped: ")
    return reason if reason.startswith(PREFIX) else ""
