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
