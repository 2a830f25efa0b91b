"""Options to a plan: sizes, and the reproduce line."""

from __future__ import annotations

import pytest

from bridge.cli import plans
from bridge.errors import UsageError


def test_sizes_take_the_suffixes_file_size_takes():
    assert plans.parse_sizes("16, 1k,16KiB,1M,1000") == (16, 1024, 16384, 1 << 20, 1000)
    assert plans.parse_sizes("1k,1024") == (1024,)  # the same size once


@pytest.mark.parametrize(
    "bad", ["0", "-16", "lots", "k", "2G", "1.5k", "", "²", "16²", "١٦", "１６", "1_6", "16\x1b[2J"]
)
def test_sizes_refused_with_one_line(bad):
    with pytest.raises(UsageError, match="--sizes") as err:
        plans.parse_sizes(bad)
    assert "\n" not in err.value.one_line()


@pytest.mark.parametrize("bad", ["²", "١k", "２５６M", "1_000", "nan", "-1"])
def test_file_size_takes_ascii_digits_only(bad):
    with pytest.raises(UsageError, match="--file-size") as err:
        plans.parse_byte_count(bad)
    assert "\n" not in err.value.one_line()
    assert plans.parse_byte_count("256M") == 256 << 20


def test_an_option_a_scenario_cannot_follow_is_said(capsys):
    # Some scenario follows it: a warning naming the option and the one that does not.
    plan = plans.from_options(
        plans.RunOptions(scenarios=("ecdh-p256", "hmac-sha1"), sizes="16,16384"), ("bridge",)
    )
    assert [sc.sizes for sc in plan.scenarios] == [(32,), (16, 16384)]
    assert capsys.readouterr().err == (
        "bridge: warning: --sizes does not apply to ecdh-p256: its one size is the shared"
        " secret's length\n"
    )
    # None does: an error, before anything runs.
    for options in (
        plans.RunOptions(scenarios=("x25519",), sizes="64"),
        plans.RunOptions(scenarios=("sha256",), file_size="1M"),
        plans.RunOptions(scenarios=("file-sha256",), concurrency="1,2"),
    ):
        with pytest.raises(UsageError, match="changes nothing in this run"):
            plans.from_options(options, ("bridge",))


def test_a_baseline_that_names_no_kind_is_refused_before_the_run():
    from bridge.cli import common

    common.check_baseline("openssl@1.1.1w")
    with pytest.raises(UsageError, match="--baseline 'nobody' is not a runtime name"):
        common.check_baseline("nobody")
