"""The view's promises that are not about one run's shape."""

from __future__ import annotations

import dataclasses

from bridge.analysis.findings import complete
from bridge.render import markdown, terminal, text
from bridge.report import schema
from bridge.view import Detail, build
from bridge.view.model import NoteKind
from tests.conftest import FIXTURES, ROOT

VIEW = FIXTURES / "view"


def test_unstable_marks_are_keyed_by_their_scenario():
    """sha256 and sha512 both have hash at 16 B on one runtime: each
    scenario's table marks its own unstable cell (a fix merged from
    i37-site: the marks were keyed without the scenario)."""
    report = complete(schema.load(VIEW / "hmac.json"))
    first = report.results[0]
    twin = dataclasses.replace(first, scenario="hmac-sha1-again")
    cells = [
        schema.UnstableCell(r.scenario, r.runtime, r.call_id, r.size, r.hw, 0.2)
        for r in (first, twin)
    ]
    both = dataclasses.replace(
        report, results=(*report.results, twin), unstable=tuple(cells), differences=()
    )
    view = build(both)
    for section in view.sections:
        table = section.tables[0]
        median = table.column("median")
        marked = [row for row in table.rows if row[median].mark == "!"]
        assert len(marked) == 1, section.key
    shown = terminal.render(view, 80)
    assert shown.count("!\n") + shown.count("! ") >= 2


def test_quiet_has_no_caveats_verbose_names_the_statistics():
    report = complete(schema.load(VIEW / "conc.json"))
    quiet = build(report, Detail.QUIET)
    assert not quiet.caveats and not quiet.provenance
    assert not any(n.kind is NoteKind.WARNING for s in quiet.sections for n in s.notes)
    normal = terminal.render(build(report), 80)
    assert "Spearman" not in normal
    assert "Spearman" in terminal.render(build(report, Detail.VERBOSE), 80)


def test_the_autogroup_note_only_where_python_workers_ran():
    report = complete(schema.load(VIEW / "conc.json"))
    c = report.concurrency
    erlang_only = dataclasses.replace(
        c, cells=tuple(x for x in c.cells if x.runtime.startswith("erlang"))
    )
    assert "autogroup" in terminal.render(build(report), 80)
    alone = dataclasses.replace(report, concurrency=erlang_only)
    assert "autogroup" not in terminal.render(build(alone), 80)


def test_warnings_have_one_capitalisation():
    for name in ("hmac.json", "conc.json", "tls.json"):
        view = build(complete(schema.load(VIEW / name)))
        for line in terminal.render(view, 80).splitlines():
            assert not line.startswith("warning:"), line


def test_the_text_view_is_about_as_long_as_the_terminal_one():
    """One quick scenario: the text view says each verdict once (it was 178
    lines against the terminal's 53)."""
    report = complete(schema.load(VIEW / "hmac.json"))
    view = build(report)
    mail, term = text.render(view), terminal.render(view, 80)
    assert len(mail.splitlines()) <= len(term.splitlines()) * 1.3
    assert max(map(len, mail.splitlines())) <= 72
    assert mail.isascii()


def test_markdown_keeps_a_few_columns_and_folds_the_rest():
    report = complete(schema.load(VIEW / "hmac.json"))
    md = markdown.render(build(report))
    first_row = next(line for line in md.splitlines() if line.startswith("| runtime"))
    assert first_row.count("|") - 1 <= 7
    assert "<details><summary>Every column</summary>" in md
    # Every withheld verdict carries its reason in the Markdown too.
    answers = [line for line in md.splitlines() if line.startswith("- ") and "inconclusive" in line]
    assert answers and all(" — " in line for line in answers)


def test_a_failed_process_says_its_own_last_words_at_every_detail():
    """The worker's or openssl's stderr tail is often the only place that says
    why it failed: every detail and format shows its last lines (the view had
    kept them for -v only)."""
    report = complete(schema.load(VIEW / "hmac.json"))
    tail = "\n".join(f"line {i}" for i in range(12)) + "\nspeed is broken\n"
    error = schema.RunError("openssl@3.0.19", "worker", "openssl exited with status 3", tail)
    failed = dataclasses.replace(report, errors=(error,))
    for detail in Detail:
        (note,) = build(failed, detail).problems
        assert note.text.startswith("Error: openssl exited with status 3")
        assert note.lines[0] == "line 5" and note.lines[-1] == "speed is broken"
        assert "line 4" not in note.lines  # the last eight lines, not the whole stream
    for render in (terminal.render, text.render, markdown.render):
        assert "speed is broken" in " ".join(render(build(failed)).split()), render


def test_the_slowest_of_n_stands_in_the_levels_order_and_names_calls_alike():
    """--concurrency: the slowest-of-N table lists its cells as the levels
    table above it does (each call and mode, then N) and by the same names
    ("crypto:macN (procs)", not "macN (procs)"): a saved TLS run's, whose
    threads and processes had alternated level by level."""
    report = complete(schema.load(ROOT / "docs/findings/reports/tls-handshake-levels-quick.json"))
    (section,) = build(report).sections
    levels = next(t for t in section.tables if t.column("scaling") is not None)
    slowest = next(t for t in section.tables if t.title == "Slowest of N")

    def keyed(t):
        at = [t.column(k) for k in ("runtime", "call", "n")]
        return [tuple(row[i].text for i in at) for row in t.rows]

    assert keyed(slowest) and set(keyed(slowest)) <= set(keyed(levels))
    order = keyed(levels)
    assert [order.index(k) for k in keyed(slowest)] == sorted(
        order.index(k) for k in keyed(slowest)
    )


def test_warnings_name_the_users_expressions_as_the_table_does():
    """bridge time: a noise finding about an expression's cell names it by
    its label (erl, py), never by its call id (expr:83f2aa0a), at every
    detail, one cell or several."""
    from bridge.report.findings import Why, reason

    labelled = schema.load(FIXTURES / "view" / "time-labels.json")
    noise = schema.load(ROOT / "docs/findings/reports/hmac-sha1.json").noise
    assert noise is not None

    def cell(runtime: str, call_id: str) -> dict:
        return dict(
            scenario="time", runtime=runtime, call_id=call_id, size=1024, hw="on", unit="bytes"
        )

    found = (
        reason(Why.CELL_DRIFT, **cell("python@3.11.7", "expr:f06d5742"), shift=0.22, z=4.1),
        reason(Why.CELL_WAITED, **cell("erlang@25.2.3", "expr:83f2aa0a"), share=0.5),
        reason(Why.CELL_WAITED, **cell("erlang@25.2.3", "expr:776cb289"), share=0.6),
    )
    report = dataclasses.replace(labelled, noise=dataclasses.replace(noise, findings=found))
    for detail in Detail:
        said = " ".join(n.text for n in build(complete(report), detail).caveats)
        if detail is Detail.QUIET:
            continue
        assert "expr:" not in said, detail
        # (A sentence's first letter is a capital here; the writers lower it after "Warning:".)
        assert "python@3.11.7 py at 1 kib" in said.lower(), detail
        assert "erlang@25.2.3 erl at" in said.lower(), detail
