"""--libcrypto in the whole run pipeline, with fake runtimes that "map" a
library: each runtime runs again (with its masked twin) under the other
library's id; another soname is skipped with the reason; a runtime that does
not load the library stops the run before anything is measured, and every
runtime started is stopped. The real processes are in tests/cli."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bridge.measure import runner
from bridge.measure.plan import Plan
from bridge.measure.seams import Seams
from bridge.report import schema
from bridge.report.hw import HwMode
from bridge.runtimes.base import RuntimeSpec
from bridge.runtimes.other_libcrypto import NotLoaded
from bridge.system import libcrypto
from bridge.system.libcrypto import Directory, Library, Mapped
from tests.session.fake import FAKE_CPU, FakeRuntime, Log, Script
from tests.session.test_session import SETTINGS, mac_scenario


@pytest.fixture(scope="module")
def system_libcrypto() -> Path:
    import _hashlib  # noqa: F401  - loads libcrypto into this process

    return Path(libcrypto.mapped(os.getpid())[0].path)


def mapping(path: Path) -> Mapped:
    st = os.stat(path)
    return Mapped(1, str(path), (os.major(st.st_dev), os.minor(st.st_dev)), st.st_ino)


class LibFake(FakeRuntime):
    """Maps the --libcrypto file when its directory is in front, as the
    loader does; or the system's always, as a runtime with a DT_RPATH does."""

    def __init__(self, *args, system: Path, obeys: bool) -> None:
        super().__init__(*args)
        self.system, self.obeys = system, obeys

    def mapped_libcrypto(self) -> list[Mapped]:
        if self.libcrypto_dir and self.obeys:
            return [mapping(Path(self.libcrypto_dir) / libcrypto.soname_of(self.system))]
        return [mapping(self.system)]


def directory(tmp_path: Path, soname: str) -> Directory:
    (tmp_path / soname).write_bytes(b"stands in for the library")
    lib = Library("/opt/ssl35", tmp_path, tmp_path / soname, soname, "OpenSSL 3.5.4 30 Sep 2025")
    return Directory("/opt/ssl35", tmp_path, {soname: lib})


def execute(tmp_path, system, soname=None, obeys=True, kinds=("python",), hw="both", log=None):
    log = log if log is not None else Log()
    scripts = [Script(kind=k, version="25.2.3" if k == "erlang" else "3.11.0") for k in kinds]
    found = directory(tmp_path, soname or libcrypto.soname_of(system))

    def specs(plan):
        return [
            RuntimeSpec(
                s.kind,
                f"fake {s.kind}",
                lambda hw, env, s=s: LibFake(s, log, hw, env, system=system, obeys=obeys),
            )
            for s in scripts
        ]

    seams = Seams(
        specs=specs,
        cpu=FAKE_CPU,
        check_mask=lambda plan, ctx: schema.MaskCheck(ok=True, by="fake check"),
        environment=lambda: {},
    )
    plan = Plan(
        scenarios=(mac_scenario(),), settings=SETTINGS, seed=1, hw=HwMode(hw), libcrypto=(found,)
    )
    return runner.execute(plan, seams=seams), log


def test_each_runtime_runs_again_with_the_other_library(tmp_path, system_libcrypto):
    outcome, log = execute(tmp_path, system_libcrypto, kinds=("python", "erlang"))
    report = outcome.report
    ids = [(rt.id, rt.hw) for rt in report.runtimes]
    assert ids == [
        ("python@3.11.0", "on"),
        ("python@3.11.0", "off"),
        ("python@3.11.0+libcrypto-3.5.4", "on"),
        ("python@3.11.0+libcrypto-3.5.4", "off"),
        ("erlang@25.2.3", "on"),
        ("erlang@25.2.3", "off"),
        ("erlang@25.2.3+libcrypto-3.5.4", "on"),
        ("erlang@25.2.3+libcrypto-3.5.4", "off"),
    ]
    variant = report.runtime("python@3.11.0+libcrypto-3.5.4")
    proof = variant.details.libcrypto_dir
    assert proof.file == str(tmp_path / libcrypto.soname_of(system_libcrypto))
    assert proof.version == "OpenSSL 3.5.4 30 Sep 2025" and proof.given == "/opt/ssl35"
    assert proof.maps and proof.file in proof.maps[0]
    assert variant.details.libcrypto_loaded == (proof.file,)
    # Its cells, with and without the mask, and a verdict of its own.
    assert {(r.runtime, r.hw) for r in report.results} >= {
        ("python@3.11.0+libcrypto-3.5.4", "on"),
        ("python@3.11.0+libcrypto-3.5.4", "off"),
    }
    assert any(v.runtime == "erlang@25.2.3+libcrypto-3.5.4" for v in report.verdicts)
    # The upgrade view lines each one up with its base.
    pairs = {(u.old, u.new) for u in report.upgrades}
    assert pairs == {
        ("python@3.11.0", "python@3.11.0+libcrypto-3.5.4"),
        ("erlang@25.2.3", "erlang@25.2.3+libcrypto-3.5.4"),
    }
    assert not outcome.failed and not report.skipped
    started = [e for e in log.of("start")]
    assert len(started) == 8 and len(log.of("stop")) == 8


def test_a_runtime_of_another_soname_is_skipped_with_the_reason(tmp_path, system_libcrypto):
    outcome, _ = execute(tmp_path, system_libcrypto, soname="libcrypto.so.1.1", hw="on")
    (skipped,) = outcome.report.skipped
    assert skipped.runtime == "python@3.11.0+libcrypto /opt/ssl35"
    assert f"it loads {libcrypto.soname_of(system_libcrypto)}" in skipped.reason
    assert "has libcrypto.so.1.1" in skipped.reason and "another soname" in skipped.reason
    assert [rt.id for rt in outcome.report.runtimes] == ["python@3.11.0"]
    assert outcome.report.results  # the runtime itself still ran


def test_a_runtime_that_does_not_load_it_stops_the_run(tmp_path, system_libcrypto):
    with pytest.raises(NotLoaded, match="did not load") as caught:
        execute(tmp_path, system_libcrypto, obeys=False, kinds=("python", "erlang"))
    assert str(system_libcrypto) in caught.value.one_line()
    assert "outranks LD_LIBRARY_PATH" in caught.value.one_line()


def test_a_refusal_stops_every_runtime_already_started(tmp_path, system_libcrypto):
    log = Log()
    with pytest.raises(NotLoaded):
        execute(tmp_path, system_libcrypto, obeys=False, log=log)
    # The runtime and its masked twin, then the refused one (after its own
    # start): nothing was measured, and all three are stopped.
    assert len(log.of("start")) == 3 and len(log.of("stop")) == 3
    assert log.of("bench") == []


def test_a_runtime_that_cannot_show_its_maps_is_skipped(tmp_path, system_libcrypto):
    log = Log()
    script = Script(kind="python")
    seams = Seams(
        specs=lambda plan: [
            RuntimeSpec("python", "fake", lambda hw, env: FakeRuntime(script, log, hw, env))
        ],
        cpu=FAKE_CPU,
        check_mask=lambda plan, ctx: schema.MaskCheck(ok=True),
        environment=lambda: {},
    )
    found = directory(tmp_path, "libcrypto.so.3")
    plan = Plan(
        scenarios=(mac_scenario(),), settings=SETTINGS, seed=1, hw=HwMode.ON, libcrypto=(found,)
    )
    (skipped,) = runner.execute(plan, seams=seams).report.skipped
    assert "cannot tell which libcrypto it loads" in skipped.reason
