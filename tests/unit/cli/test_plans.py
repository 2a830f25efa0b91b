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


# -- --with: the opt-in alternatives --------------------------------------------


def _loaded(*names):
    from bridge.catalog import scenario

    return tuple(scenario.load(n) for n in names)


ALL = ("erlang", "python", "openssl")


def test_with_adds_a_call_to_the_scenarios_of_its_kind_only():
    kdf, mac = plans.add_calls(_loaded("pbkdf2-sha256", "hmac-sha1"), ("pbkdf2_mac",), ALL)
    assert kdf.calls["erlang"] == ("pbkdf2_hmac", "pbkdf2_mac")
    assert mac.calls == _loaded("hmac-sha1")[0].calls
    # Given twice, or already named by the scenario: once.
    (again,) = plans.add_calls(_loaded("pbkdf2-sha256"), ("pbkdf2_mac", "erlang:pbkdf2_mac"), ALL)
    assert again.calls["erlang"] == ("pbkdf2_hmac", "pbkdf2_mac")


def test_with_takes_call_ids_that_hold_a_colon():
    assert plans.with_spec("public_key:verify") == (None, "public_key:verify")
    assert plans.with_spec("erlang:public_key:verify") == ("erlang", "public_key:verify")
    (sc,) = plans.add_calls(_loaded("ecdsa-p256"), ("public_key:verify",), ALL)
    assert sc.calls["erlang"][-1] == "public_key:verify"


@pytest.mark.parametrize(
    ("spec", "names", "kinds", "says"),
    [
        ("nope", ("hmac-sha1",), ALL, "no such call"),
        ("python:rand_bytes", ("strong-rand-bytes",), ALL, "no such call"),
        ("rand_bytes", ("hmac-sha1",), ALL, "serves random scenarios, and this run has none"),
        ("rand_bytes", ("strong-rand-bytes",), ("python",), "erlang is not among the runtimes"),
        ("pbkdf2_hmac", ("pbkdf2-sha256",), ALL, "more than one runtime has this call"),
    ],
)
def test_with_refuses_what_would_be_ignored(spec, names, kinds, says):
    with pytest.raises(UsageError, match=says) as err:
        plans.add_calls(_loaded(*names), (spec,), kinds)
    assert "\n" not in err.value.one_line()


def test_with_is_in_the_reproduce_line():
    o = plans.RunOptions(scenarios=("strong-rand-bytes",), with_calls=("rand_bytes",))
    plan = plans.from_options(o, ("bridge",))
    assert "--with rand_bytes" in plan.reproduce
    assert plan.scenarios[0].calls["erlang"] == ("strong_rand_bytes", "rand_bytes")
