"""bridge as people install a CLI tool: the built wheel, installed into a
fresh venv, runs from any directory. The Erlang worker's sources (erl/), the
built-in scenarios (scenarios/) and the report's JSON Schema (bridge/report/)
travel in it as package data.

Nothing is downloaded when it can be avoided: the wheel is built with this
venv's own setuptools (--no-build-isolation), and the fresh venv installs
with --no-index from the built wheel and a wheelhouse of bridge's
dependencies at the versions installed here. The wheelhouse is made once,
with pip, and kept in the user's cache; where pip cannot make it (offline,
no cache) the test is skipped with the reason, except in CI."""

from __future__ import annotations

import importlib.metadata
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT, STARTING_ENV, needs_erl, needs_openssl, own_stderr

# Both tests build in the checkout (its build/ and crypto_bridge.egg-info): under
# pytest-xdist they run on one worker, one after the other (make test: --dist loadgroup).
pytestmark = [needs_erl, needs_openssl, pytest.mark.xdist_group("builds-in-the-checkout")]


def _run(argv, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=300, **kw)


def _requirements(wheel: Path) -> list[str]:
    """The wheel's dependencies (no extras), pinned to the versions installed here."""
    with zipfile.ZipFile(wheel) as z:
        meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        text = z.read(meta).decode()
    names = [
        re.match(r"[A-Za-z0-9_.-]+", line.split(":", 1)[1].strip()).group(0)
        for line in text.splitlines()
        if line.startswith("Requires-Dist:") and "extra ==" not in line and _applies(line)
    ]
    return [f"{n}=={importlib.metadata.version(n)}" for n in names]


def _applies(requirement: str) -> bool:
    """Whether a Requires-Dist line's environment marker holds here (tomli:
    only below Python 3.11)."""
    _, _, marker = requirement.partition(";")
    if not marker.strip():
        return True
    from packaging.markers import Marker

    return Marker(marker.strip()).evaluate()


def _wheelhouse(requirements: list[str]) -> Path:
    """Wheels of the dependencies, made once per set of versions."""
    base = Path(STARTING_ENV.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    house = base / "bridge" / "wheelhouse" / "-".join(sorted(requirements)).replace("/", "_")
    if house.is_dir() and len(list(house.glob("*.whl"))) >= len(requirements):
        return house
    house.mkdir(parents=True, exist_ok=True)
    done = _run([sys.executable, "-m", "pip", "wheel", "-q", "-w", house, *requirements])
    if done.returncode != 0:
        reason = f"cannot make the dependency wheels: {done.stderr.strip()[-300:]}"
        if STARTING_ENV.get("CI", "").lower() == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    return house


def test_the_wheel_installs_in_a_fresh_venv_and_runs_from_anywhere(tmp_path, no_leftovers):
    dist = tmp_path / "dist"
    built = _run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation"]
        + ["-w", dist, ROOT]
    )
    assert built.returncode == 0, built.stderr
    # setuptools says nothing: no deprecated license table, no other warning.
    assert "warning" not in (built.stdout + built.stderr).lower(), built.stdout + built.stderr
    # The distribution's name (the command is still bridge, and crypto-bridge).
    (wheel,) = dist.glob("crypto_bridge-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
    for path in (ROOT / "erl").glob("*.erl"):
        assert f"bridge/_erl/{path.name}" in names
    for path in (ROOT / "scenarios").glob("*.toml"):
        assert f"bridge/_scenarios/{path.name}" in names
    for path in (ROOT / "bridge" / "report").glob("*.schema.json"):
        assert f"bridge/report/{path.name}" in names
    # The man page, as a data file pip puts in <prefix>/share/man/man1.
    assert any(n.endswith(".data/data/share/man/man1/crypto-bridge.1") for n in names), names

    house = _wheelhouse(_requirements(wheel))
    venv = tmp_path / "venv"
    assert _run([sys.executable, "-m", "venv", "--without-pip", venv]).returncode == 0
    python = venv / "bin" / "python"
    installed = _run(
        [sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-index"]
        + ["--find-links", dist, "--find-links", house, "crypto-bridge"]
    )
    assert installed.returncode == 0, installed.stderr

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    bridge = venv / "bin" / "bridge"
    for command in (bridge, venv / "bin" / "crypto-bridge"):
        version = _run([command, "--version"], cwd=elsewhere, env=env)
        assert version.returncode == 0 and re.fullmatch(r"bridge, version \S+\n", version.stdout)
    # The installed copy, not this checkout, answers.
    shown = _run([bridge, "show", "hmac-sha1"], cwd=elsewhere, env=env)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith(f"# {venv.resolve()}/lib/"), shown.stdout[:200]

    out = elsewhere / "r.json"
    ran = _run(
        [bridge, "run", "hmac-sha1", "--quick", "--hw", "on", "-o", out, "--format", "json"],
        cwd=elsewhere,
        env=env,
    )
    assert ran.returncode == 0, ran.stderr
    report = __import__("json").loads(out.read_text())
    assert {rt["kind"] for rt in report["runtimes"]} == {"erlang", "python", "openssl"}
    assert all(r["status"] == "ok" for r in report["results"])
    assert all(c["match"] for c in report["interop"])
    python_rt = next(rt for rt in report["runtimes"] if rt["kind"] == "python")
    assert python_rt["executable"] == str(python)
    # Reading it back validates it against the schema the wheel carries.
    shown = _run([bridge, "report", out, "--format", "markdown"], cwd=elsewhere, env=env)
    assert shown.returncode == 0 and shown.stdout.startswith("#"), shown.stderr

    _man_page_is_found(venv, elsewhere, env)
    _completion_works(venv, elsewhere, env)


def _man_page_is_found(venv: Path, cwd: Path, env: dict[str, str]) -> None:
    """`man crypto-bridge` with the venv's bin on PATH: man-db looks in
    bin/../share/man of each PATH entry (pipx links it into ~/.local/share/man)."""
    on_path = {**env, "PATH": f"{venv / 'bin'}:{env.get('PATH', '/usr/bin:/bin')}"}
    on_path.pop("MANPATH", None)
    where = _run(["man", "-w", "crypto-bridge"], cwd=cwd, env=on_path)
    assert where.returncode == 0, where.stderr
    assert where.stdout.strip() == str(venv / "share" / "man" / "man1" / "crypto-bridge.1")
    page = _run(
        ["man", "-M", venv / "share" / "man", "-P", "cat", "crypto-bridge"],
        cwd=cwd,
        env={**on_path, "MANWIDTH": "80"},
    )
    assert page.returncode == 0, page.stderr
    assert "crypto-bridge run [OPTIONS] [SCENARIOS]..." in page.stdout
    assert "_CRYPTO_BRIDGE_COMPLETE=bash_source" in page.stdout


def _completion_works(venv: Path, cwd: Path, env: dict[str, str]) -> None:
    """bash loads the script click makes, and its completion function, run as
    bash runs it on Tab, offers scenario names: the built-in ones, and those
    of a --scenario-dir typed before."""
    mine = cwd / "mine"
    mine.mkdir()
    (mine / "hmac-mine.toml").write_text(
        _run(
            [venv / "bin" / "crypto-bridge", "show", "hmac-sha1"], cwd=cwd, env=env
        ).stdout.replace('name = "hmac-sha1"', 'name = "hmac-mine"')
    )
    script = (
        'eval "$(_CRYPTO_BRIDGE_COMPLETE=bash_source crypto-bridge)"\n'
        "complete -p crypto-bridge\n"
        'tab() { COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); COMPREPLY=();'
        ' _crypto_bridge_completion crypto-bridge; echo "${COMPREPLY[*]}"; }\n'
        "tab crypto-bridge run hmac\n"
        "tab crypto-bridge show sha5\n"
        f"tab crypto-bridge run --scenario-dir {mine} hmac-m\n"
        "tab crypto-bridge ru\n"
    )
    on_path = {**env, "PATH": f"{venv / 'bin'}:{env.get('PATH', '/usr/bin:/bin')}"}
    done = _run(["bash", "--norc", "--noprofile", "-c", script], cwd=cwd, env=on_path)
    assert done.returncode == 0, done.stderr
    registered, builtin, shown, own, command = done.stdout.splitlines()
    assert registered.startswith("complete ") and registered.endswith(" crypto-bridge")
    assert builtin.split() == ["hmac-parts", "hmac-sha1", "hmac-sha256"]
    assert shown.split() == ["sha512"]
    assert own.split() == ["hmac-mine"]
    assert command.split() == ["run"]


def test_the_editable_install_says_nothing(tmp_path):
    """What `make setup` builds (pip install -e): setuptools's editable build
    warns about nothing, neither a deprecated license table nor its
    "Editable installation" notice. (Called directly with this venv's
    setuptools: no isolated build environment to install, a few seconds.)"""
    code = (
        "import sys, warnings; warnings.simplefilter('always');"
        "from setuptools import build_meta;"
        "print(build_meta.build_editable(sys.argv[1]))"
    )
    done = _run([sys.executable, "-c", code, tmp_path], cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert not [line for line in own_stderr(done.stderr) if "warning" in line.lower()], done.stderr
    assert "Editable installation" not in done.stdout + done.stderr
    (wheel,) = tmp_path.glob("crypto_bridge-*.whl")
    with zipfile.ZipFile(wheel) as z:
        pth = [z.read(n).decode() for n in z.namelist() if n.endswith(".pth")]
    # The checkout itself on sys.path: bridge/_erl and bridge/_scenarios are
    # its links to erl/ and scenarios/.
    assert [p.strip() for p in pth] == [str(ROOT)]
