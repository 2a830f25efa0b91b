"""Parse `openssl speed` output (1.0.2, 1.1.1, 3.x; human and -mr) as people
paste it: quoted (`> `, `> > `), re-wrapped, with its line breaks lost, and
several runs in one document.

Pasted text cannot be trusted line by line, so the parser works on the text
with quote marks removed and all whitespace collapsed to single spaces. It
finds *events* there (a `Doing ...` record, a version block, a throughput
table, a sign/verify table, -mr records), maps each back to its line in the
original, and splits the events into runs: a run ends where its summary
(table) is complete and a new `Doing` begins, or where an `openssl speed`
command or a new version block starts.

`openssl speed -multi N` forks N children that print their results to the
parent (`Forked child k`, `Got: +F:... from k`); the parent then prints the
sum, as a `+F:` record (-mr) or as a table row without a `type` header
(human). Such a run has `multi` = N, the children's numbers apart, and the
summed row as its entries; the children's own progress records (`+DT`/`+R`
on stderr) are not a run of their own. Two quirks of the parent's row: 3.0
names an -hmac run "hmac(md5)" whatever the digest, and 1.1.1 names an -evp
run "evp", so the children's name is used.

Units (docs/guide/openssl-speed.md, "Units"): table values with a `k` suffix are thousands of
bytes/s, without it bytes/s; `+F:` values are bytes/s; `+F2:`-`+F4:` are
seconds per operation before 3.0 and operations per second from 3.0.
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import math
import re
from dataclasses import dataclass, field

from bridge import plain

MAX_INPUT = 16 * 1024 * 1024
# The longest provenance text kept (a version, a heading, a build line): a
# report holds 64 KiB per text; a run's label joins a few of them.
MAX_FIELD = 4096


def clip(text: str, limit: int = MAX_FIELD) -> str:
    """`text`, cut to `limit` characters with "..." where it was longer."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass(frozen=True)
class Entry:
    algorithm: str  # normalised: sha256, aes-128-cbc, hmac-md5, ecdsa-p256
    operation: str  # "" for throughput; sign | verify for public-key
    size: int  # bytes per operation; 0 for public-key
    ops_per_s: float
    bytes_per_s: float
    source: str  # summary: table | mr (+F); progress: doing | mr-progress (+R)
    line: int  # 1-based line in the document
    text: str  # the algorithm as written
    index: int | None = None  # a +F record's algorithm index (which table row)


@dataclass
class Run:
    index: int
    line: int
    command: str = ""
    version: str = ""
    built_on: str = ""
    options: str = ""
    compiler: str = ""
    cpuinfo: str = ""
    context: str = ""  # the free text just before the run ("Before:", "2) AMD EPYC")
    entries: list[Entry] = field(default_factory=list)
    tables: set[str] = field(default_factory=set)  # summary kinds seen: throughput, pkey
    multi: int = 0  # speed -multi N: N children
    children: dict[int, list[Entry]] = field(default_factory=dict)  # child -> its numbers
    child_sizes: list[int] = field(default_factory=list)

    @property
    def has_summary(self) -> bool:
        return bool(self.tables)

    @property
    def version_tuple(self) -> tuple[int, int, int] | None:
        m = re.search(r"([0-9]+)\.([0-9]+)\.([0-9]+)", self.version)
        return (int(m[1]), int(m[2]), int(m[3])) if m else None

    @property
    def evp(self) -> bool | None:
        if "-evp" in self.command:
            return True
        return None if not self.command else False

    @functools.cached_property
    def typed_path(self) -> tuple[str | None, bool | None]:
        """(generation "1" | "3", whether -evp was typed) as the version line
        and the +F records' indexes show them (`path_of`), once per run: read
        after parsing, when the entries are final. Each number's call asks,
        and walking the entries for each was quadratic in a row's width."""
        v = self.version_tuple
        generation = None if v is None else ("3" if v >= (3, 0, 0) else "1")
        evp = None
        for entry in self.entries:
            gen, typed = path_of(entry)
            generation = generation or gen
            evp = typed if evp is None else evp
            if generation is not None and evp is not None:
                break
        return generation, evp

    def label(self) -> str:
        parts = [f"run {self.index} (line {self.line})"]
        if self.context:
            parts.append(self.context)
        parts.append(self.version or "version not shown")
        return ": ".join(parts)


@dataclass
class Parsed:
    runs: list[Run]
    warnings: list[str]


# -- normalisation -----------------------------------------------------------

QUOTE = re.compile(r"^\s*(?:>\s?)+")


class _Text:
    """The document with quotes removed and whitespace collapsed, plus a map
    from offsets in that text back to original line numbers."""

    def __init__(self, document: str) -> None:
        self.lines = [QUOTE.sub("", line).strip() for line in document.splitlines()]
        pieces, starts, pos = [], [], 0
        for line in self.lines:
            starts.append(pos)
            collapsed = " ".join(line.split())
            pieces.append(collapsed)
            pos += len(collapsed) + 1
        self.text = " ".join(pieces)
        self.starts = starts

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset)


# -- events --------------------------------------------------------------------

NUM = r"[0-9]+(?:\.[0-9]+)?"
DOING_SYM = re.compile(
    r"Doing (?P<alg>[\w()./-]+(?: [\w()./-]+)?) (?:ops )?for (?P<secs>[0-9]+)s on (?P<size>[0-9]+)"
    r" size blocks: (?P<count>[0-9]+) (?:[\w()./-]+(?: [\w()./-]+)?)(?:'s| ops) in (?P<t>"
    + NUM
    + r")s"
)
DOING_PKEY = re.compile(
    r"Doing (?P<bits>[0-9]+)[ -]bits? (?P<op>sign|verify|private|public) (?P<alg>\w+)"
    r"(?:'s| ops) for (?P<secs>[0-9]+)s: (?P<count>[0-9]+) [0-9]+[ -]bits? \w+(?:'s)?"
    r" (?P<op2>signs?|verify|verifies|ops)? ?in (?P<t>" + NUM + r")s"
)
# Kept only where it starts a line: "Compare `openssl speed` for ecdsa" is prose.
COMMAND = re.compile(
    r"(?:\$ )?openssl speed(?P<args>(?: (?!Doing\b|OpenSSL\b|version:|type\b|The\b|You\b|Forked\b)"
    r"-?[\w()./-]+){0,8})"
)
NOTE = re.compile(
    r"The 'numbers' are in 1000s of bytes per second processed\."
    r"|You have chosen to measure elapsed time instead of user CPU time\."
)
VERSION_1X = re.compile(
    r"(?P<v>OpenSSL [0-9]+\.[0-9]+\.[0-9]+[a-z]*(?:-\w+)?) +[0-9]{1,2} \w{3} [0-9]{4}"
)
VERSION_3X = re.compile(r"version: (?P<v>[0-9]+\.[0-9]+\.[0-9]+\S*)")
BUILD = re.compile(
    r"(?P<key>built on|options|compiler|CPUINFO): ?(?P<value>.*?)"
    r"(?= built on:| options:| compiler:| CPUINFO:| The 'numbers'| type [0-9]| type 16| Doing |"
    r" \+[A-Z]| openssl speed| sign verify|"
    # the headerless row a -multi parent prints: a name, then values in k
    r" [A-Za-z][\w()./-]* [0-9]+(?:\.[0-9]+)?k(?= |$)|$)"
)
FORKED = re.compile(r"Forked child (?P<child>[0-9]+)")
GOT = re.compile(r"Got: \+(?P<tag>H|F[0-9]*):(?P<body>[^ ]+) from (?P<child>[0-9]+)")
MULTI_ROW = re.compile(
    r"(?:^| )(?P<name>[A-Za-z][\w()./-]*)(?P<values>(?: [0-9]+(?:\.[0-9]+)?k)+)(?= |$)"
)
TABLE_HEAD = re.compile(r"\btype((?: [0-9]+ bytes)+)")
ROW_NAME = r"(?P<name>[A-Za-z][\w()./-]*(?: (?:cbc|ecb|ige|ede3|cfb|ofb|ctr|gcm|ccm))?)"
PKEY_HEAD = re.compile(r"sign verify(?: encrypt decrypt)? sign/s verify/s(?: encr\./s decr\./s)?")
PKEY_ROW = re.compile(
    r" ?(?:(?P<bits>[0-9]+) bits? (?P<alg>ecdsa|dsa) \((?P<curve>[\w-]+)\)"
    r"|(?P<alg2>rsa|dsa) (?P<bits2>[0-9]+) bits) (?P<s1>"
    + NUM
    + r")s (?P<s2>"
    + NUM
    + r")s(?: "
    + NUM
    + r"s "
    + NUM
    + r"s)?"
    r" (?P<r1>" + NUM + r") (?P<r2>" + NUM + r")(?: " + NUM + r" " + NUM + r")?"
)
MR = re.compile(r"\+(?P<tag>DTP?|R[0-9]*|H|F[0-9]*):(?P<body>[^ ]+)")


@dataclass
class _Event:
    kind: str  # command | doing | version | build | table | pkey | mr
    start: int
    end: int
    data: dict


def _events(t: _Text) -> list[_Event]:
    text, events = t.text, []
    line_starts = set(t.starts)
    for m in COMMAND.finditer(text):
        if m.start() not in line_starts:
            continue
        events.append(_Event("command", m.start(), m.end(), {"text": m.group(0).lstrip("$ ")}))
    for m in NOTE.finditer(text):
        events.append(_Event("note", m.start(), m.end(), {}))
    for m in DOING_SYM.finditer(text):
        events.append(_Event("doing", m.start(), m.end(), m.groupdict()))
    for m in DOING_PKEY.finditer(text):
        events.append(_Event("doing_pkey", m.start(), m.end(), m.groupdict()))
    for rx in (VERSION_1X, VERSION_3X):
        for m in rx.finditer(text):
            events.append(_Event("version", m.start(), m.end(), {"version": m.group("v")}))
    for m in BUILD.finditer(text):
        events.append(_Event("build", m.start(), m.end(), m.groupdict()))
    for m in TABLE_HEAD.finditer(text):
        sizes = [int(x) for x in re.findall(r"[0-9]+", m.group(1))]
        rows, end = _table_rows(text, m.end(), len(sizes))
        events.append(_Event("table", m.start(), end, {"sizes": sizes, "rows": rows}))
    for m in PKEY_HEAD.finditer(text):
        rows, end = _pkey_rows(text, m.end())
        events.append(_Event("pkey", m.start(), end, {"rows": rows}))
    for m in MR.finditer(text):
        events.append(_Event("mr", m.start(), m.end(), m.groupdict()))
    for m in FORKED.finditer(text):
        events.append(_Event("forked", m.start(), m.end(), m.groupdict()))
    for m in GOT.finditer(text):
        events.append(_Event("got", m.start(), m.end(), m.groupdict()))
    for m in MULTI_ROW.finditer(text):
        start = m.start("name")
        events.append(_Event("multi_row", start, m.end(), m.groupdict()))
    events.sort(key=lambda e: e.start)
    return events


def _table_rows(text: str, pos: int, n: int) -> tuple[list[tuple[str, list[float], int]], int]:
    value = r"(" + NUM + r")(k?)"
    row = re.compile(r" " + ROW_NAME + r"((?: " + value + r"){" + str(n) + r"})(?= |$)")
    rows = []
    while True:
        m = row.match(text, pos)
        if not m or m.group("name") in ("Doing", "type", "openssl", "version", "OpenSSL"):
            return rows, pos
        values = [float(v) * (1000 if k else 1) for v, k in re.findall(value, m.group(2))]
        rows.append((m.group("name"), values, m.start() + 1))
        pos = m.end()


def _pkey_rows(text: str, pos: int) -> tuple[list[dict], int]:
    rows = []
    while True:
        m = PKEY_ROW.match(text, pos)
        if not m:
            return rows, pos
        rows.append({**m.groupdict(), "offset": m.start()})
        pos = m.end()


# -- algorithm names -------------------------------------------------------------

CURVES = {
    "nistp224": "p224",
    "nistp256": "p256",
    "nistp384": "p384",
    "nistp521": "p521",
    "prime256v1": "p256",
    "secp384r1": "p384",
    "secp521r1": "p521",
}


NISTP = re.compile(r"^nist(p[0-9]+)$")


def normalize(name: str) -> str:
    """`aes-128 cbc`, `AES-128-CBC` -> aes-128-cbc; `hmac(md5)` -> hmac-md5."""
    n = name.strip().lower().replace(" ", "-")
    m = re.fullmatch(r"hmac\((.+)\)", n)
    if m:
        return f"hmac-{m.group(1)}"
    return {"sha": "sha1"}.get(n, n)


def _pkey_name(alg: str, bits: str, curve: str | None) -> str:
    alg = alg.lower()
    if curve:
        c = curve.lower()
        short = CURVES.get(c) or NISTP.sub(r"\1", c)
        return f"{alg}-{short}"
    return f"{alg}-{bits}"


# -- runs ------------------------------------------------------------------------


def parse(document: str) -> Parsed:
    if len(document) > MAX_INPUT:
        raise ValueError(f"document larger than {MAX_INPUT // 2**20} MiB")
    t = _Text(document)
    runs: list[Run] = []
    warnings: list[str] = []
    cur: Run | None = None
    consumed = _Spans()
    mr_sizes: list[int] = []
    mr_dt: dict[str, tuple[int, int]] = {}

    def new_run(offset: int) -> Run:
        run = Run(index=len(runs) + 1, line=t.line_of(offset))
        runs.append(run)
        return run

    last_line = 0
    for ev in _events(t):
        if ev.kind == "multi_row":
            # Only the summed row a -multi parent prints, where one is awaited.
            if _multi_row(cur, ev, t):
                consumed.add(ev.start, ev.end)
                last_line = max(last_line, t.line_of(max(ev.start, ev.end - 1)))
            continue
        if consumed.covers(ev.start) and ev.kind != "build":
            continue  # inside a table already read (e.g. a number that looks like a version)
        consumed.add(ev.start, ev.end)
        line = t.line_of(ev.start)
        if (
            last_line
            and _free_text_between(t, last_line, line)
            and ev.kind not in ("build", "note")
        ):
            cur = None  # prose between two events: they belong to different runs
        last_line = max(last_line, t.line_of(max(ev.start, ev.end - 1)))
        if ev.kind == "note":
            continue
        if ev.kind == "command":
            cur = new_run(ev.start)
            cur.command = clip(ev.data["text"])
        elif ev.kind in ("doing", "doing_pkey"):
            entry = _doing_entry(ev, line)
            # A summary ends a run; so does a measurement the run already has
            # (the "After:" block repeating the "Before:" one).
            if cur is None or cur.has_summary or _key(entry) in {_key(e) for e in cur.entries}:
                cur = new_run(ev.start)
            cur.entries.append(entry)
        elif ev.kind == "version":
            if cur is None or (cur.version and cur.has_summary):
                cur = new_run(ev.start)
            cur.version = cur.version or clip(_version_text(ev.data["version"]))
        elif ev.kind == "build":
            if cur is not None:
                key = ev.data["key"].replace(" ", "_").lower()
                if not getattr(cur, key):
                    setattr(cur, key, clip(ev.data["value"].strip()))
        elif ev.kind in ("table", "pkey"):
            rows = _table_entries(ev, t) if ev.kind == "table" else _pkey_entries(ev, t)
            if ev.kind == "table" and not rows:
                warnings.append(f"line {line}: a throughput table header with no rows read")
            kind = "throughput" if ev.kind == "table" else "pkey"
            # A run has one table of each kind, and its table repeats its own
            # Doing counts; a table that disagrees belongs to another run.
            if cur is None or kind in cur.tables or not _agrees(cur.entries, rows):
                cur = new_run(ev.start)
            cur.entries += rows
            cur.tables.add(kind)
        elif ev.kind in ("forked", "got"):
            if cur is None or cur.has_summary or (not cur.multi and cur.entries):
                cur = new_run(ev.start)
            cur.multi = max(cur.multi, int(ev.data["child"]) + 1)
            if ev.kind == "got":
                _unless_malformed(_add_child, warnings, line, ev, cur, ev, line)
        elif ev.kind == "mr" and cur is not None and cur.multi and ev.data["tag"] in ("DT", "R"):
            continue  # a child's progress, on stderr
        elif ev.kind == "mr":
            args = (cur, ev, line, mr_sizes, mr_dt, new_run)
            cur = _unless_malformed(_add_mr, warnings, line, ev, *args) or cur
    for run in runs:
        if run.multi:
            _settle_multi(run, warnings)
    previous = None
    for run in runs:
        # A run with no heading of its own belongs to the previous heading
        # ("2) AMD EPYC" covers both the plain and the -evp run under it).
        found = _context(t, run.line, previous.line if previous else 0)
        run.context = clip(found) if found is not None else (previous.context if previous else "")
        _prefer_summary(run)
        _drop_non_measurements(run, warnings)
        previous = run
    _warn_unread(t, consumed, warnings)
    kept = [r for r in runs if r.entries]
    for i, run in enumerate(kept, 1):
        run.index = i
    return Parsed(runs=kept, warnings=warnings)


class _Spans:
    """The spans of the text that events read, added in order of their
    start: whether an offset lies in one is a bisection (a scan of every
    span per event was quadratic in the number of records)."""

    def __init__(self) -> None:
        self._starts: list[int] = []
        self._reach: list[int] = []  # the furthest end of any span up to here

    def add(self, start: int, end: int) -> None:
        if self._starts and start < self._starts[-1]:
            raise ValueError("spans are added in order of their start")
        self._starts.append(start)
        self._reach.append(max(end, self._reach[-1]) if self._reach else end)

    def covers(self, offset: int) -> bool:
        i = bisect.bisect_right(self._starts, offset)
        return i > 0 and offset < self._reach[i - 1]


def _unless_malformed(add, warnings: list[str], line: int, ev: _Event, *args):
    """add(*args), or a warning where a record's number is not a number
    (`+F:6:sha256:abc`): the record is skipped, the rest still read."""
    try:
        return add(*args)
    except (ValueError, IndexError, ZeroDivisionError):
        record = clip(f"+{ev.data['tag']}:{ev.data['body']}", 80)
        warnings.append(f"line {line}: could not read {record!r}")
        return None


def _measured(e: Entry) -> bool:
    """A rate that can be a measurement: finite and positive. A time of 0 or
    less, a count of 0, nan or inf gives none."""
    return 0 < e.ops_per_s < math.inf and 0 <= e.bytes_per_s < math.inf


def _drop_non_measurements(run: Run, warnings: list[str]) -> None:
    for entries in (run.entries, *run.children.values()):
        for e in [e for e in entries if not _measured(e)]:
            entries.remove(e)
            what = f"{e.text} {e.operation}".strip() + (f" at {e.size} B" if e.size else "")
            warnings.append(
                f"line {e.line}: {what}: {e.ops_per_s:g} operations/s is not a measurement"
                " (a time, count or rate that is zero, negative or not a finite number)"
            )


def _free_text_between(t: _Text, after: int, before: int) -> bool:
    """Is there a non-empty line strictly between lines `after` and `before`?"""
    return any(t.lines[n - 1].strip() for n in range(after + 1, before))


def _version_text(v: str) -> str:
    return v if v.startswith(("OpenSSL", "LibreSSL")) else f"OpenSSL {v}"


def _doing_entry(ev: _Event, line: int) -> Entry:
    d, t = ev.data, float(ev.data["t"])
    count = int(d["count"])
    ops = count / t if t > 0 else 0.0
    if ev.kind == "doing":
        size = int(d["size"])
        return Entry(normalize(d["alg"]), "", size, ops, ops * size, "doing", line, d["alg"])
    op = {"private": "sign", "public": "verify"}.get(d["op"], d["op"])
    name = f"{d['alg'].lower()}-{d['bits']}"
    if d["alg"].lower() == "ecdsa":
        name = f"ecdsa-p{d['bits']}"
    return Entry(name, op, 0, ops, 0.0, "doing", line, f"{d['bits']} bit {d['alg']}")


def _table_entries(ev: _Event, t: _Text) -> list[Entry]:
    sizes = ev.data["sizes"]
    out = []
    for name, values, offset in ev.data["rows"]:
        for size, bps in zip(sizes, values, strict=True):
            line = t.line_of(offset)
            ops = bps / size if size else math.nan  # "type 0 bytes": not a measurement
            out.append(Entry(normalize(name), "", size, ops, bps, "table", line, name))
    return out


def _pkey_entries(ev: _Event, t: _Text) -> list[Entry]:
    out = []
    for row in ev.data["rows"]:
        alg = row["alg"] or row["alg2"]
        bits = row["bits"] or row["bits2"]
        name = _pkey_name(alg, bits, row["curve"])
        line = t.line_of(row["offset"])
        written = f"{bits} bit {alg}" + (f" ({row['curve']})" if row["curve"] else "")
        for op, rate in (("sign", float(row["r1"])), ("verify", float(row["r2"]))):
            out.append(Entry(name, op, 0, rate, 0.0, "table", line, written))
    return out


def _key(e: Entry) -> tuple[str, str, int]:
    return (e.algorithm, e.operation, e.size)


def _agrees(progress: list[Entry], summary: list[Entry], tolerance: float = 0.02) -> bool:
    """Do a table's numbers match the Doing records they would summarise?
    (Same counts, so within rounding; 2% allows for the 2-decimal print.)"""
    doing = {_key(e): e.ops_per_s for e in progress if e.source == "doing"}
    for e in summary:
        seen = doing.get(_key(e))
        if seen and abs(e.ops_per_s - seen) > tolerance * seen:
            return False
    return True


def _is_count(text: str) -> bool:
    return plain.whole_number(text) is not None


def _add_mr(cur, ev, line, mr_sizes, mr_dt, new_run):
    tag, fields = ev.data["tag"], ev.data["body"].split(":")
    if tag == "H":
        mr_sizes[:] = [int(x) for x in fields if _is_count(x)]
        return cur
    if cur is None or (cur.has_summary and tag in ("DT", "DTP")):
        cur = new_run(ev.start)
    if tag == "DT" and len(fields) >= 3 and _is_count(fields[1]) and _is_count(fields[2]):
        mr_dt[fields[0]] = (int(fields[1]), int(fields[2]))
    elif tag == "R" and len(fields) >= 3 and _is_count(fields[0]) and fields[1] in mr_dt:
        count, t_s = int(fields[0]), float(fields[2])
        size = mr_dt[fields[1]][1]
        ops = count / t_s if t_s > 0 else 0.0
        cur.entries.append(
            Entry(normalize(fields[1]), "", size, ops, ops * size, "mr-progress", line, fields[1])
        )
    elif tag == "F" and len(fields) >= 3:
        name, values = fields[1], fields[2:]
        # A -multi parent prints no +H of its own: its children's say the sizes.
        sizes = (cur.multi and cur.child_sizes) or mr_sizes or SIZES[: len(values)]
        for size, v in zip(sizes, values, strict=False):
            bps = float(v)
            idx = int(fields[0]) if _is_count(fields[0]) else None
            cur.entries.append(
                Entry(normalize(name), "", size, bps / size, bps, "mr", line, name, idx)
            )
        cur.tables.add("throughput")
    elif tag in ("F2", "F3", "F4") and len(fields) >= 4:
        alg = {"F2": "rsa", "F3": "dsa", "F4": "ecdsa"}[tag]
        sign, verify = float(fields[2]), float(fields[3])
        # 1.x: seconds per operation; 3.x: operations per second.
        old = cur.version_tuple is not None and cur.version_tuple < (3, 0, 0)
        per_op = old or (cur.version_tuple is None and 0 < sign < 1 and 0 < verify < 1)
        name = f"ecdsa-p{fields[1]}" if alg == "ecdsa" else f"{alg}-{fields[1]}"
        for op, v in (("sign", sign), ("verify", verify)):
            rate = (1 / v if v > 0 else 0.0) if per_op else v
            cur.entries.append(Entry(name, op, 0, rate, 0.0, "mr", line, name))
        cur.tables.add("pkey")
    return cur


def _add_child(run: Run, ev: _Event, line: int) -> None:
    """A `Got: +H:...`/`Got: +F:...` record: one child's numbers."""
    tag, fields = ev.data["tag"], ev.data["body"].split(":")
    child = int(ev.data["child"])
    if tag == "H":
        run.child_sizes = [int(x) for x in fields if _is_count(x)]
        return
    if tag != "F" or len(fields) < 3:
        return  # public-key children (+F2..) are not read here
    sizes = run.child_sizes or SIZES[: len(fields) - 2]
    for size, v in zip(sizes, fields[2:], strict=False):
        bps = float(v)
        entry = Entry(normalize(fields[1]), "", size, bps / size, bps, "child", line, fields[1])
        run.children.setdefault(child, []).append(entry)


def _multi_row(cur: Run | None, ev: _Event, t: _Text) -> bool:
    """The parent's summed row (human output): after the children's records,
    with as many values as they had sizes."""
    if cur is None or not cur.multi or cur.has_summary or not cur.children:
        return False
    values = [float(v[:-1]) * 1000 for v in ev.data["values"].split()]
    sizes = cur.child_sizes or SIZES
    if len(values) != len(sizes):
        return False
    line = t.line_of(ev.start)
    name = ev.data["name"]
    for size, bps in zip(sizes, values, strict=True):
        cur.entries.append(Entry(normalize(name), "", size, bps / size, bps, "table", line, name))
    cur.tables.add("throughput")
    return True


def _settle_multi(run: Run, warnings: list[str]) -> None:
    """The summed entries take the children's algorithm name; with no summed
    record at all, the children's numbers are summed here, and said so."""
    kids = [e for entries in run.children.values() for e in entries]
    if not kids:
        return
    name, text = kids[0].algorithm, kids[0].text
    if not run.entries:
        totals: dict[int, float] = {}
        for e in kids:
            totals[e.size] = totals.get(e.size, 0.0) + e.bytes_per_s
        line = kids[-1].line
        run.entries = [
            Entry(name, "", size, bps / size, bps, "children", line, text)
            for size, bps in totals.items()
        ]
        warnings.append(
            f"line {run.line}: openssl speed -multi {run.multi} without the parent's summary;"
            " the children's numbers are summed"
        )
        return
    run.entries = [
        dataclasses.replace(e, algorithm=name, text=text) if e.source in SUMMARY else e
        for e in run.entries
    ]


SUMMARY = ("table", "mr")  # progress records are "doing" and "mr-progress"
SIZES = [16, 64, 256, 1024, 8192, 16384]  # speed's sizes when it does not say


def _prefer_summary(run: Run) -> None:
    """Where the summary (table, +F records) and a progress record (Doing line,
    +R record) give the same measurement, keep the summary's number, as posted."""

    summarized = {_key(e) for e in run.entries if e.source in SUMMARY}
    run.entries = [e for e in run.entries if e.source in SUMMARY or _key(e) not in summarized]


# A heading ends in a colon and has no full stop, except inside parentheses:
# "Before:", "2) AMD EPYC", "Before (1.1.1):", "After (OpenSSL 3.0.19):".
HEADING = re.compile(
    r"^(?:\(?[0-9]{1,3}[).]\s+\S.*|[A-Z](?:[^.:()]|\([^():]{0,30}\)){0,58}:"
    r"|(?:No|With|Without) \S.{0,50})$"
)


def _context(t: _Text, line: int, since: int) -> str | None:
    """The nearest heading above a run and below line `since` ("Before:",
    "2) AMD EPYC", "With enable-ec_nistp_64_gcc_128"); None if there is none."""
    for n in range(line - 1, max(since, line - 16), -1):
        text = t.lines[n - 1].strip()
        if HEADING.match(text) and not text.startswith(("Doing", "+", "type ", "OpenSSL ")):
            return text.rstrip(":")
    return None


def _warn_unread(t: _Text, consumed: _Spans, warnings: list[str]) -> None:
    """Speed-looking fragments that no rule read: say so instead of dropping them."""
    for m in re.finditer(r"Doing |\+R[0-9]*:|\+F[0-9]*:", t.text):
        if not consumed.covers(m.start()):
            snippet = t.text[m.start() : m.start() + 50]
            warnings.append(f"line {t.line_of(m.start())}: could not read {snippet!r}")


# -- which code path a +F record measured ----------------------------------------
#
# `openssl speed -mr` prints `+F:<index>:<name>:...`, the index of the row in
# speed.c's table of algorithms. The table was reordered in 3.0, so for the
# digests the index says both the generation and whether -evp was given
# (read from speed.c's `names[]`, and checked against 1.1.1w and 3.0.19 here:
# `speed -mr sha256` gives +F:23 and +F:6, `speed -mr -evp sha256` +F:22 and
# +F:25). With -evp the row is D_EVP whatever the algorithm.
# D_EVP: 22 in 1.0.2/1.1.1, 25 in 3.x; the other generation's row at that
# index (camellia-128-cbc in 3.x, whirlpool in 1.x) has a name of its own.
EVP_INDEX = {22: ("1", "camellia-128-cbc"), 25: ("3", "whirlpool")}
PLAIN_INDEX = {
    ("sha1", 5): "1",
    ("sha256", 23): "1",
    ("sha512", 24): "1",
    ("sha1", 4): "3",
    ("sha256", 6): "3",
    ("sha512", 7): "3",
}


def path_of(entry: Entry) -> tuple[str | None, bool | None]:
    """(generation "1" | "3", whether -evp was given) that a +F record's index
    shows; (None, None) where it shows nothing (no index, other algorithms)."""
    if entry.index is None:
        return None, None
    if entry.index in EVP_INDEX and entry.algorithm != EVP_INDEX[entry.index][1]:
        return EVP_INDEX[entry.index][0], True
    generation = PLAIN_INDEX.get((entry.algorithm, entry.index))
    return (generation, False) if generation else (None, None)
