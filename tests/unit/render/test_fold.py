"""layout.fold: `bridge env`'s long description lines within the width."""

from __future__ import annotations

from bridge.render import layout


def test_a_long_line_folds_two_spaces_under_itself_and_short_ones_stay():
    text = (
        "CPU: AMD EPYC (x86_64, 2 CPUs)\n"
        "  libcrypto loaded: " + " ".join(f"/usr/lib/lib{i}.so" for i in range(12)) + "\n"
        "\n"
        "erlang@25.2.3: masks aes+sha with OPENSSL_ia32cap=" + "f" * 90 + "\n"
    )
    out = layout.fold(text, 60)
    lines = out.splitlines()
    assert lines[0] == "CPU: AMD EPYC (x86_64, 2 CPUs)"
    assert lines[1].startswith("  libcrypto loaded: /usr/lib/lib0.so")
    assert lines[2].startswith("    /usr/lib/lib")
    assert "" in lines  # the blank line between blocks stays
    assert all(len(line) <= 60 for line in lines)
    assert out.endswith("\n")
    # A word longer than a line (a capability vector) is broken, not left wide.
    assert "".join(line.strip() for line in lines[lines.index("") + 1 :]).endswith("f" * 90)
    assert layout.fold("short\n", 60) == "short\n"
