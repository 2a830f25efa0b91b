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
