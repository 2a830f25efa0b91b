"""Output that is true as printed: titles that follow the sizes run, a
reproduce line that pastes into a shell, compare that leaves out what an
imported report cannot have, and a pointer to import-speed for pasted text."""

from __future__ import annotations

import pytest

from bridge import model
from bridge.errors import UsageError


def test_report_on_pasted_speed_output_points_to_import_speed(tmp_path):
    pasted = tmp_path / "speed.txt"
    pasted.write_text("> Doing sha256 for 3s on 16 size blocks: 100 sha256's in 3.00s\n")
    with pytest.raises(UsageError) as err:
        model.load(pasted)
    assert f"bridge import-speed {pasted}" in err.value.one_line()
    other = tmp_path / "notes.txt"
    other.write_text("just some notes\n")
    with pytest.raises(UsageError, match="not JSON") as err:
        model.load(other)
    assert "import-speed" in err.value.one_line()


def test_compare_with_an_imported_report_lists_only_what_both_can_have():
    from bridge import compare
    from tests.conftest import FIXTURES

    measured = model.load(FIXTURES / "roundtrip" / "run-mix1.json")
    imported = model.load(FIXTURES / "roundtrip" / "import-3.0.json")
    diff = dict(compare.environment_diff([measured, imported]))
    # An imported paste has no CPU, OS, kernel, OTP or Python: not differences.
    assert set(diff) == {"openssl CLI"}
    assert diff["openssl CLI"][1] == "OpenSSL 3.0.19"
    # Between two measured reports the same fields are still compared.
    other = model.Report.from_json(
        {**measured.to_json(), "environment": {**measured.environment, "kernel": "7.0"}}
    )
    assert dict(compare.environment_diff([measured, other]))["kernel"][1] == "7.0"
