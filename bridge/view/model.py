"""The view: what every writer lays out. Data, already worded, not yet laid
out: an answer per question the run asked, the tables with their columns in
the order they may go, the notes; no width, no markup, no escaping (each
writer escapes for its own format, in one place)."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Detail(str, enum.Enum):
    """How much a view says, the same in every format: QUIET (-q: the
    answer and the tables, no caveats), NORMAL, VERBOSE (-v: every column,
    full labels, the statistics by name, full provenance)."""

    QUIET = "quiet"
    NORMAL = "normal"
    VERBOSE = "verbose"

    @classmethod
    def of(cls, verbose: bool = False, quiet: bool = False) -> Detail:
        return cls.VERBOSE if verbose else cls.QUIET if quiet else cls.NORMAL


class Tone(str, enum.Enum):
    """A hint for colour or emphasis (the writers may ignore it)."""

    GOOD = "good"
    BAD = "bad"
    WARN = "warn"
    MUTED = "muted"
    PLAIN = "plain"


@dataclass(frozen=True)
class Phrase:
    text: str
    tone: Tone = Tone.PLAIN


class AnswerKind(str, enum.Enum):
    """Which question an answer answers, in the order a view gives them."""

    HARDWARE = "hardware"
    VERSIONS = "versions"
    SCALING = "scaling"
    HANDSHAKES = "handshakes"
    EXPRESSIONS = "expressions"
    TIMES = "times"


@dataclass(frozen=True)
class AnswerLine:
    """One line of an answer: who, the verdict word, the figure with its CI,
    and for a verdict withheld (inconclusive, ?) why and what to rerun."""

    subject: str
    verdict: Phrase
    figure: str = ""
    reason: str = ""
    rerun: str = ""


@dataclass(frozen=True)
class Answer:
    kind: AnswerKind
    heading: str
    lines: tuple[AnswerLine, ...]


@dataclass(frozen=True)
class Column:
    """A table's column: `drop` says when it may go to fit a width (lower
    goes first; None: never); `ident` columns name a row, and are repeated
    when a table too wide for its width is folded into parts."""

    key: str
    header: str
    right: bool = False
    drop: float | None = None
    ident: bool = False
    note: str = ""  # what its marks mean: said under the table while it is shown


@dataclass(frozen=True)
class Cell:
    """`short`: the cell's shorter form, used before any column goes."""

    text: str
    tone: Tone = Tone.PLAIN
    mark: str = ""
    short: str | None = None


@dataclass(frozen=True)
class Table:
    title: str
    columns: tuple[Column, ...]
    rows: tuple[tuple[Cell, ...], ...]
    legend: tuple[str, ...] = ()

    def column(self, key: str) -> int | None:
        return next((i for i, c in enumerate(self.columns) if c.key == key), None)


class NoteKind(str, enum.Enum):
    LEGEND = "legend"  # what a table's names and marks mean
    FINDING = "finding"  # a further finding (set-up cost, the cost model)
    CAVEAT = "caveat"  # what limits the numbers (the machine, unstable cells)
    WARNING = "warning"  # a difference that changes what the numbers mean
    ADVICE = "advice"
    PROBLEM = "problem"  # skipped runtimes, errors


@dataclass(frozen=True)
class Note:
    """`lines`: a process's own words, shown under the text as it wrote
    them, one line each (a failed process's stderr)."""

    kind: NoteKind
    text: str
    count: int = 1
    lines: tuple[str, ...] = ()


@dataclass(frozen=True)
class Point:
    """One point of a series: `y` at `x` with its 95% CI (lo, hi; both y
    where it has none), `text` the size it is at, worded (a writer spaces
    the sizes of a picture evenly and labels them with it), `tone` its
    verdict's (a ratio's: decided where not PLAIN)."""

    x: float
    y: float
    lo: float
    hi: float
    text: str = ""
    tone: Tone = Tone.PLAIN


@dataclass(frozen=True)
class Series:
    """One line or set of bars of a picture: its label, what it is of, and
    its points with their 95% CI."""

    scenario: str
    label: str
    runtime: str
    call: str
    hw: str
    metric: str  # what y is, worded: the heading of its picture
    points: tuple[Point, ...]
    ratio: bool = False  # a ratio: drawn around a line at 1


@dataclass(frozen=True)
class Section:
    """One scenario (or the concurrency block, or one pair of a comparison)."""

    key: str
    title: str
    answers: tuple[Answer, ...] = ()
    tables: tuple[Table, ...] = ()
    notes: tuple[Note, ...] = ()
    series: tuple[Series, ...] = ()


@dataclass(frozen=True)
class View:
    title: str
    sections: tuple[Section, ...]
    provenance: tuple[str, ...] = ()
    caveats: tuple[Note, ...] = ()
    problems: tuple[Note, ...] = ()
    reproduce: tuple[str, ...] = ()  # the command's words, unquoted; () for none
    reproduce_notes: tuple[str, ...] = ()
    detail: Detail = Detail.NORMAL

    def answers(self) -> tuple[Answer, ...]:
        return tuple(a for s in self.sections for a in s.answers)
