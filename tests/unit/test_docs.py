"""The generated documentation is current, and the mechanism that keeps it so
works: scripts/gen-docs renders the findings' output blocks from saved
reports and writes the CLI reference and the man page from the click
commands; --check fails on anything stale (make docs runs it too)."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from pathlib import Path

import click
import pytest

from bridge.cli.common import rendered

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = "tests/fixtures/report-hmac-sha1-v1.json"


def _load_gen_docs():
    loader = importlib.machinery.SourceFileLoader("gen_docs", str(ROOT / "scripts" / "gen-docs"))
    spec = importlib.util.spec_from_loader("gen_docs", loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_docs"] = module  # dataclasses look their module up there
    loader.exec_module(module)
    return module


gen_docs = _load_gen_docs()
# Where the click group and the report loader live (the redesign moves them;
# gen-docs knows both places).
cli = gen_docs.click_group()
load = gen_docs.report_loader()


def _page(tmp_path: Path, body: str) -> Path:
    page = tmp_path / "page.md"
    page.write_text(body, encoding="utf-8")
    return page


def _block(report: str = FIXTURE, fmt: str = "table", inner: str = "```\n```") -> str:
    return (
        f"Before.\n\n<!-- render: bridge report {report} --format {fmt} -->\n"
        f"{inner}\n<!-- end render -->\n\nAfter.\n"
    )


# -- the repository's own docs ------------------------------------------------


def test_every_generated_file_and_render_block_is_current():
    assert gen_docs.stale() == []


def test_the_findings_have_render_blocks_and_their_reports_exist():
    blocks = []
    for page in sorted((ROOT / "docs" / "findings").glob("*.md")):
        lines = page.read_text(encoding="utf-8").split("\n")
        blocks += list(gen_docs.blocks(page, lines))
    assert len(blocks) >= 3
    for b in blocks:
        path = b.command.split()[2]
        assert (ROOT / path).is_file(), f"{b.page.name}:{b.line}: {path}"
        assert path.startswith("docs/findings/reports/")


# -- render blocks ------------------------------------------------------------


def test_a_block_is_rewritten_with_exactly_what_the_renderer_prints(tmp_path):
    page = _page(tmp_path, _block(inner="```\nan old figure: 1,234 ns\n```"))
    page_text = gen_docs.render_page(page)
    want = rendered("table", load(ROOT / FIXTURE)).rstrip("\n")
    assert f"```\n{want}\n```" in page_text
    assert "an old figure" not in page_text
    assert page_text.startswith("Before.\n") and page_text.endswith("After.\n")
    # A fixed point: rendering the page_text page changes nothing.
    page.write_text(page_text, encoding="utf-8")
    assert gen_docs.render_page(page) == page_text


def test_a_block_that_differs_by_one_character_is_stale(tmp_path):
    want = rendered("text", load(ROOT / FIXTURE)).rstrip("\n")
    drifted = want.replace("1", "2", 1)
    assert drifted != want
    page = _page(tmp_path, _block(fmt="text", inner=f"```\n{drifted}\n```"))
    assert gen_docs.render_page(page) != page.read_text(encoding="utf-8")


def test_an_indented_block_stays_inside_its_admonition(tmp_path):
    body = (
        '??? example "a run"\n\n'
        f"    <!-- render: bridge report {FIXTURE} --format text -->\n"
        "    ```\n    ```\n    <!-- end render -->\n"
    )
    page_text = gen_docs.render_page(_page(tmp_path, body))
    inside = page_text.split("-->\n", 1)[1].split("<!-- end render -->")[0]
    assert all(line.startswith("    ") or not line for line in inside.split("\n"))
    assert inside.count("```") == 2


def test_markers_inside_a_fenced_example_are_text(tmp_path):
    body = "````html\n" + _block(report="docs/findings/reports/NAME.json") + "````\n"
    page = _page(tmp_path, body)
    assert list(gen_docs.blocks(page, body.split("\n"))) == []
    assert gen_docs.render_page(page) == body


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (f"<!-- render: bridge report {FIXTURE} --format table -->\n```\n```\n", "without"),
        ("text\n<!-- end render -->\n", "without its opening"),
        (_block(report="docs/findings/reports/no-such.json"), "no saved report"),
        (_block(fmt="yaml"), "unknown format"),
        ("<!-- render: bridge run hmac-sha1 -->\n```\n```\n<!-- end render -->\n", "runs `bridge"),
    ],
)
def test_a_malformed_block_is_an_error_that_names_the_line(tmp_path, body, message):
    with pytest.raises(gen_docs.DocsError, match=message) as exc:
        gen_docs.render_page(_page(tmp_path, body))
    assert "page.md:" in str(exc.value)


# -- the CLI reference and the man page ---------------------------------------


def _walk(cmd: click.Command, path: str):
    yield path, cmd
    if isinstance(cmd, click.Group):
        for name in sorted(cmd.commands):
            yield from _walk(cmd.commands[name], f"{path} {name}")


def test_the_cli_reference_has_every_command_and_option():
    md = (ROOT / "docs" / "reference" / "cli.md").read_text(encoding="utf-8")
    man = (ROOT / "docs" / "reference" / "crypto-bridge.1").read_text(encoding="utf-8")
    for path, cmd in _walk(cli, "crypto-bridge"):
        assert f"\n## {path}\n" in md or f"\n### {path}\n" in md, path
        assert f'.SS "{path.replace("-", chr(92) + "-")} ' in man, path
        for param in cmd.params:
            if isinstance(param, click.Option) and not param.hidden:
                for name in param.opts:
                    assert f"`{name}" in md or f", {name}" in md, f"{path} {name}"
                    assert name.replace("-", "\\-") in man, f"{path} {name}"


def test_a_hand_edited_cli_reference_is_stale(tmp_path, monkeypatch):
    copy = tmp_path / "cli.md"
    copy.write_text(
        (ROOT / "docs" / "reference" / "cli.md").read_text(encoding="utf-8") + "\nextra\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(gen_docs, "CLI_MD", copy)
    problems = gen_docs.stale(findings=False)
    assert len(problems) == 1 and "cli.md: stale" in problems[0]


def test_the_quick_help_says_what_quick_does():
    """--quick gives each openssl cell settings.QUICK.openssl_runs runs; the
    generated reference must not say otherwise."""
    from bridge.settings import QUICK

    md = (ROOT / "docs" / "reference" / "cli.md").read_text(encoding="utf-8")
    quick = next(line for line in md.split("\n") if line.startswith("- `--quick`"))
    runs = "1 openssl run per cell" if QUICK.openssl_runs == 1 else "openssl runs per cell"
    assert f"{QUICK.samples} samples in {QUICK.rounds} rounds" in quick
    assert runs in quick


# -- reference pages written by hand, checked against the code ----------------


def _table_rows(page: str, header: str) -> list[list[str]]:
    """The rows of the Markdown table whose header line starts with `header`."""
    lines = (ROOT / "docs" / "reference" / page).read_text(encoding="utf-8").split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


def _names(cell: str) -> list[str]:
    return [n for n in cell.replace("`", "").replace(",", " ").split() if n]


def test_the_scenario_format_lists_every_kind_and_each_call_it_accepts():
    serving = gen_docs._first(("bridge.catalog.calls", "serving"), ("bridge.calls", "serving"))
    kinds = gen_docs._first(("bridge.catalog.scenario", "KINDS"), ("bridge.scenario", "KINDS"))
    rows = {r[0].strip("`"): r[1:] for r in _table_rows("scenario-format.md", "| kind | erlang")}
    assert set(rows) == set(kinds)
    for kind, cells in rows.items():
        for runtime, cell in zip(("erlang", "python", "openssl"), cells, strict=True):
            assert sorted(_names(cell)) == sorted(serving(runtime, kind)), (kind, runtime)


def test_the_mask_bits_page_says_what_the_code_masks():
    bits = gen_docs._first(("bridge.hw.hardware", "IA32_BITS"), ("bridge.hardware", "IA32_BITS"))
    rows = _table_rows("masks.md", "| bridge feature |")
    seen = {}
    for feature, where, _cpuid, mask, *_ in rows:
        word, bit = (int(x.strip().removeprefix("bit ")) for x in where.split(","))
        seen[feature.strip("`")] = (word, 1 << bit)
        assert int(mask.strip("`"), 16) == 1 << bit, feature  # the mask within its word
    assert seen == bits
