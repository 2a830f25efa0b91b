"""A failed process's last words on stderr are shown as the lines it wrote,
under its error, in every format: the terminal and the text view indent
them, Markdown fences them inside the list item, the summary keeps them as
a list; each escaped for its format, the oldest past STDERR_LINES dropped."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from bridge.cli.common import rendered
from bridge.report import schema
from bridge.view import words

HMAC = Path(__file__).resolve().parents[3] / "docs" / "findings" / "reports" / "hmac-sha1.json"
TAIL = "\n".join(
    [f"old line {n}" for n in range(5)]
    + [
        "Traceback (most recent call last):",
        '  File "ops.py", line 3, in run',
        "ValueError: bad key | not a pipe",
        "",
        "```",
        "\x1b[31mred\x1b[0m",
    ]
)


def _failed() -> schema.Report:
    error = schema.RunError(
        runtime="python@3.11.7", kind="worker", message="python@3.11.7 died", stderr_tail=TAIL
    )
    return dataclasses.replace(schema.load(HMAC), errors=(error,))


def test_the_terminal_and_the_text_show_each_line_under_the_error():
    for fmt, width in (("table", 80), ("text", None)):
        shown = rendered(fmt, _failed(), width=width).splitlines()
        (at,) = [i for i, line in enumerate(shown) if line.startswith("Error: python@3.11.7 died")]
        assert shown[at] == "Error: python@3.11.7 died. Its stderr ended:"
        tail = shown[at + 1 : at + 1 + words.STDERR_LINES]
        assert tail[0] == "    old line 2"  # 9 non-blank lines: the first one goes
        assert tail[3] == "    Traceback (most recent call last):"
        assert tail[5] == "    ValueError: bad key | not a pipe"
        assert tail[6] == "    ```"
        assert "\x1b" not in "".join(tail)
        assert all(len(line) <= (width or 72) for line in shown)


def test_markdown_fences_the_lines_inside_the_item():
    md = rendered("markdown", _failed()).splitlines()
    (at,) = [i for i, line in enumerate(md) if line.startswith("- Error: python@3.11.7 died")]
    fence = md[at + 1]
    assert fence.startswith("  ````") and fence.endswith("text")  # longer than the ``` inside
    body = md[at + 2 : at + 2 + words.STDERR_LINES]
    assert body[3] == "  Traceback (most recent call last):"
    assert body[5] == "  ValueError: bad key | not a pipe"
    assert md[at + 2 + words.STDERR_LINES] == fence.removesuffix("text")
    assert "\x1b" not in "\n".join(body)


def test_the_summary_keeps_the_lines():
    view = json.loads(rendered("summary", _failed()))
    (problem,) = [p for p in view["problems"] if p["text"].startswith("Error: python@3.11.7")]
    assert problem["lines"][0] == "old line 2" and len(problem["lines"]) == words.STDERR_LINES
    assert problem["lines"][4] == '  File "ops.py", line 3, in run'
