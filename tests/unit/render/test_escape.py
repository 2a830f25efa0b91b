"""The escaping functions of bridge.render.escape, each checked the way a
reader sees its output: Markdown through a CommonMark parser with GitHub's
tables (markdown-it-py, raw HTML on, so that a tag that got through would
show as one), SVG text through an XML parser."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from markdown_it import MarkdownIt

from bridge import plain
from bridge.render import escape
from bridge.render.escape import Md, md, md_cell, md_cell_code, md_code, md_fence, md_text

HOSTILE = [
    "</details><img src=x onerror=alert(1)>",
    "<script>alert(1)</script>",
    "a`b``c```d",
    "`",
    "``",
    "` x `",
    "  ",
    "a|b\\|c\\\\|d",
    "# heading",
    "- item",
    "+ item",
    "1. item",
    "12) item",
    "---",
    "===",
    "> quote",
    "*em* **strong** _u_ __uu__ ~~s~~ ~t~",
    "[link](https://evil.example) ![img](https://evil.example/x.png) <https://evil.example>",
    "&lt;b&gt; &#60;b&#62; &amp;",
    "$x^2$ $$y$$",
    "line one\nline two\r\n# three",
    "trailing #",
    "\\",
    "back\\`tick",
    "\x1b[2J\x07\u202eevil\ud800 tab\there",
]


def _shown(value: str) -> str:
    """What a view shows of `value`: one line, a CR or another control spelt."""
    return plain.printable(value, keep_newlines=True).replace("\n", " ")


def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])


def _inline_text(rendered: str) -> str:
    """The text a paragraph or item shows, entities decoded (by the XML parser)."""
    return "".join(ET.fromstring(f"<r>{rendered}</r>").itertext())


@pytest.mark.parametrize("value", HOSTILE)
def test_text_renders_as_the_text_it_is(value):
    shown = md_text(value)
    assert "\n" not in shown
    for where in (f"- {shown}", f"### {shown}", f"para {shown}", shown):
        html = _parser().render(where).strip()
        # Nothing but the block the view wrote: no tag, link, code or emphasis of the value's.
        tags = {t for t in ("<img", "<script", "<a ", "<code", "<em", "<strong", "<s>", "<h1")}
        assert not any(t in html for t in tags), (where, html)
        expected = " ".join(_shown(value).split())
        assert " ".join(_inline_text(html).split()).endswith(expected), (where, html)


@pytest.mark.parametrize("value", HOSTILE)
def test_code_span_holds_the_text(value):
    span = md_code(value)
    html = _parser().render(f"see {span} here").strip()
    if not value.replace("\n", "").replace("\r", ""):
        return
    root = ET.fromstring(html)
    codes = root.findall(".//code")
    assert len(codes) == 1, html
    assert codes[0].text == _shown(value), (span, html)


@pytest.mark.parametrize("value", HOSTILE)
def test_table_cells_keep_the_columns(value):
    row = f"| {md_cell(value)} | {md_cell_code(value)} | {md_cell('x')} |"
    assert len(escape.md_row_cells(row)) == 3, row
    table = "| a | b | c |\n|---|---|---|\n" + row
    html = _parser().render(table)
    root = ET.fromstring(f"<r>{html}</r>")
    cells = root.findall(".//tbody/tr/td")
    assert len(cells) == 3, html
    flat = " ".join(_shown(value).split())
    assert " ".join("".join(cells[0].itertext()).split()) == flat
    assert " ".join("".join(cells[1].itertext()).split()) == flat
    assert "".join(cells[2].itertext()) == "x"


def test_a_fence_outlasts_every_backtick_run_inside():
    lines = ["```", "````sh", "text ````` more", "~~~"]
    block = md_fence(lines, "sh`evil")
    assert block[0] == "``````sh" and block[-1] == "``````"
    html = _parser().render("\n".join(block) + "\nafter\n")
    root = ET.fromstring(f"<r>{html}</r>")
    assert root.find(".//pre/code").text == "\n".join(lines) + "\n"
    assert root.find("p").text == "after"


def test_md_fills_a_template_with_escaped_values_and_keeps_markdown():
    line = md("- **{}**: {} {}", "a*b", md_code("x`y"), "<i>")
    assert isinstance(line, Md)
    assert line == "- **a\\*b**: ``x`y`` &lt;i&gt;"
    # A line that is not Md is text, whatever it holds.
    assert escape.document(["**bold**", Md("**bold**")]) == "\\*\\*bold\\*\\*\n**bold**\n"


def test_summary_text_is_html_text():
    assert escape.md_html("</summary><b>x</b> & y") == (
        "&lt;/summary&gt;&lt;b&gt;x&lt;/b&gt; &amp; y"
    )


def test_row_cells_split_at_unescaped_pipes_only():
    assert escape.md_row_cells("| a \\| b | `c` | d\\\\|e |") == [
        " a \\| b ",
        " `c` ",
        " d\\\\",
        "e ",
    ]


def test_term_text_spells_controls():
    assert escape.term_text("a\x1b[2Jb\x07\r\u202ec\ud800") == "a\\x1b[2Jb\\x07\\x0d\\u202ec\\ud800"


@pytest.mark.parametrize(
    "value", ["a\x00b\x1b[31m\x07", "\ud800 lone", "\ufffe\uffff", "x" * 500, "<&>\"'"]
)
def test_svg_text_is_xml_and_short(value):
    text = escape.svg_text(value, limit=60)
    assert len(text) <= 60
    text.encode("utf-8")  # no lone surrogate
    root = ET.fromstring(f"<t>{_xml(text)}</t>")
    assert root.text == text


def _xml(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
