"""What bridge concludes from a node's probe (bridge.nodes.probe), on canned
facts; and how reports with running nodes render and compare."""

from __future__ import annotations

import copy
import json

import pytest

from bridge.analysis import compare
from bridge.cli.common import rendered
from bridge.hw import hardware
from bridge.nodes import probe
from bridge.render.nodes import render_nodes
from bridge.report import schema
from bridge.view import Detail
from bridge.view.context import ordered
from tests.conftest import FIXTURES

X86 = (
    "processor\t: 0\nmodel name\t: AMD EPYC 7B13\n"
    "flags\t\t: fpu sse2 ssse3 aes pclmulqdq avx avx2 sha_ni hypervisor\n"
)
X86_OLD = "processor\t: 0\nmodel name\t: Intel Xeon E5\nflags\t\t: fpu sse2 ssse3 aes avx avx2\n"
ARM = "processor\t: 0\nFeatures\t: fp asimd aes pmull sha1 sha2\nCPU implementer\t: 0x41\n"


def props(**over):
    base = {
        "otp_release": b"25",
        "otp_version": b"25.2.3",
        "erts_version": b"13.1.5",
        "emu_flavor": "jit",
        "os_pid": b"4242",
        "schedulers_online": 4,
        "system_architecture": b"x86_64-pc-linux-gnu",
        "os_type": b"unix/linux",
        "hostname": b"db1",
        "code_mode": "interactive",
        "crypto_app_version": b"5.1.2",
        "crypto_loaded": True,
        "info_lib": [(b"OpenSSL", 805306672, b"OpenSSL 3.0.19 27 Jan 2026")],
        "crypto_info": [("link_type", "dynamic")],
        "info_fips": "not_supported",
        "libcrypto_mapped": [b"/usr/lib/x86_64-linux-gnu/libcrypto.so.3"],
        "ia32cap": None,
        "armcap": None,
        "cpuinfo": X86.encode(),
    }
    base.update(over)
    return base


def facts(**over) -> probe.NodeFacts:
    return probe.from_props("app@db1", props(**over))


def test_the_facts_as_probed():
    f = facts()
    assert f.otp_version == "25.2.3" and f.arch == "x86_64" and f.crypto_lib.startswith("OpenSSL")
    assert f.cpu is not None and f.cpu.has("sha") and f.env["OPENSSL_ia32cap"] is None
    assert f.crypto_info == {"link_type": "dynamic"}


def test_sha_ni_used_when_nothing_masks_it():
    assert probe.verdict(facts()) == (
        "libcrypto OpenSSL 3.0.19 27 Jan 2026 (/usr/lib/x86_64-linux-gnu/libcrypto.so.3) on a"
        " CPU with SHA-NI and AES-NI, no mask in the node's environment: the SHA-1/SHA-256"
        " paths use SHA-NI; the AES paths use AES-NI"
    )


def test_a_mask_in_the_nodes_environment():
    v = probe.verdict(facts(ia32cap=b":~0x20000000"))
    assert "OPENSSL_ia32cap=:~0x20000000 in the node's environment" in v
    assert "the mask switches SHA-NI off, so the SHA-1/SHA-256 paths run without it" in v
    assert "the AES paths use AES-NI" in v


def test_the_1_1_1_trap_an_empty_mask_switches_everything_off():
    v = probe.verdict(
        facts(ia32cap=b"", info_lib=[(b"OpenSSL", 1, b"OpenSSL 1.1.1w  11 Sep 2023")])
    )
    assert "switches SHA-NI off" in v and "switches AES-NI off" in v


def test_a_cpu_without_sha_ni():
    v = probe.verdict(facts(cpuinfo=X86_OLD.encode()))
    assert "on a CPU with AES-NI" in v
    assert "the SHA-1/SHA-256 paths run without SHA-NI, which the CPU lacks" in v


def test_arm():
    v = probe.verdict(facts(system_architecture=b"aarch64-unknown-linux-gnu", cpuinfo=ARM.encode()))
    assert "the SHA-1/SHA-256 paths use the ARMv8 SHA instructions" in v


def test_an_openssl_older_than_the_sha_code():
    v = probe.verdict(facts(info_lib=[(b"OpenSSL", 1, b"OpenSSL 1.0.1u  22 Sep 2016")]))
    assert "OpenSSL has used it only since 1.0.2" in v and "the AES paths use AES-NI" in v


@pytest.mark.parametrize(
    "over, said",
    [
        ({"crypto_loaded": False, "info_lib": []}, "crypto is not loaded on the node"),
        ({"info_lib": [(b"LibreSSL", 1, b"LibreSSL 3.8.2")]}, "LibreSSL does not choose"),
        ({"info_lib": [(b"?", 1, b"something")]}, "does not recognise its version"),
        ({"cpuinfo": None, "cpuinfo_error": b"enoent"}, "could not read its CPU's flags (enoent)"),
    ],
)
def test_what_bridge_cannot_say(over, said):
    assert said in probe.verdict(facts(**over))


def _local(*libraries):
    return [
        probe.LocalLibrary(f"runtime {i}", lib, f"crypto-bridge run {{}} --erl /x/{i} --hw both")
        for i, lib in enumerate(libraries)
    ]


def test_ab_points_to_the_same_libcrypto_here():
    cpu = hardware.parse_cpuinfo(X86, "x86_64")
    said = probe.local_ab(
        facts(), _local("OpenSSL 1.1.1w  11 Sep 2023", "OpenSSL 3.0.19 27 Jan 2026"), cpu
    )
    assert said.startswith(probe.NO_AB)
    assert "The same libcrypto (OpenSSL 3.0.19) runs here in runtime 1" in said
    assert "`crypto-bridge run sha256 --erl /x/1 --hw both`" in said
    assert "lacks" not in said


def test_ab_nearest_series_and_a_cpu_that_lacks_the_feature():
    cpu = hardware.parse_cpuinfo(X86_OLD, "x86_64")
    said = probe.local_ab(facts(), _local("OpenSSL 3.0.17 1 Jul 2025"), cpu)
    assert "No runtime here has OpenSSL 3.0.19; the nearest is OpenSSL 3.0.17" in said
    assert "this machine's CPU lacks it" in said


def test_ab_when_nothing_here_uses_that_library():
    said = probe.local_ab(facts(), _local("OpenSSL 1.1.1w  11 Sep 2023"), None)
    assert said.endswith(
        "run `crypto-bridge run sha256 --hw both` where that library is installed."
    )


# -- reports with nodes ----------------------------------------------------------

NODES = FIXTURES / "report-nodes.json"


def test_node_report_reads_back_unchanged():
    data = json.loads(NODES.read_text())
    assert schema.Report.from_json(data).to_json() == data


def test_nodes_render_with_their_own_host(tmp_path):
    report = schema.load(NODES)
    text = rendered("text", report, Detail.VERBOSE)
    assert max(len(line) for line in text.splitlines()) <= 72
    flat = " ".join(text.split())
    assert "running node t23@vm (os pid" in flat and "on host vm: AMD EPYC" in flat
    assert "at most 25% of one scheduler busy" in flat
    assert "the SHA-1/SHA-256 paths use SHA-NI" in flat
    nodes = render_nodes(
        [rt for rt in report.runtimes if rt.node_host], {"erlang@23.2.6@t23@vm": "A/B here."}
    )
    assert "verdict: libcrypto OpenSSL 1.1.1w" in nodes and "A/B: A/B here." in nodes


def _on_host(data: dict, runtime_id: str, host: str, new_id: str) -> None:
    for rt in data["runtimes"]:
        if rt["id"] == runtime_id:
            rt["node"]["host"] = host
            rt["id"] = new_id
    for r in data["results"]:
        if r["runtime"] == runtime_id:
            r["runtime"] = new_id


def test_rows_of_one_host_sit_together():
    data = json.loads(NODES.read_text())
    ids = [rt["id"] for rt in data["runtimes"]]
    _on_host(data, ids[0], "db2", "erlang@25.2.3@a@db2")
    extra = copy.deepcopy([r for r in data["results"] if r["runtime"] == ids[1]])
    for r in extra:
        r["runtime"] = "erlang@23.2.6@b@db2"
    data["results"] += extra
    rt = copy.deepcopy(next(x for x in data["runtimes"] if x["id"] == ids[1]))
    rt["id"], rt["node"]["host"] = "erlang@23.2.6@b@db2", "db2"
    data["runtimes"].append(rt)
    report = schema.Report.from_json(data)
    order = [r.runtime for r in ordered(report, list(report.results))]
    # db2's two nodes first (db2 was seen first), then vm's.
    assert order == ["erlang@25.2.3@a@db2", "erlang@23.2.6@b@db2", ids[1]]


def test_compare_pairs_nodes_by_host_not_by_order():
    a = json.loads(NODES.read_text())
    b = copy.deepcopy(a)
    ids = [rt["id"] for rt in a["runtimes"]]
    _on_host(a, ids[0], "db1", "erlang@25.2.3@x@db1")
    _on_host(a, ids[1], "db2", "erlang@23.2.6@y@db2")
    # The other report names the same hosts in the other order.
    _on_host(b, ids[0], "db2", "erlang@25.2.3@y@db2")
    _on_host(b, ids[1], "db1", "erlang@23.2.6@x@db1")
    rows = compare.pair(schema.Report.from_json(a), schema.Report.from_json(b))
    pairs = {(r.runtime_a, r.runtime_b) for r in rows}
    assert pairs == {
        ("erlang@25.2.3@x@db1", "erlang@23.2.6@x@db1"),
        ("erlang@23.2.6@y@db2", "erlang@25.2.3@y@db2"),
    }
