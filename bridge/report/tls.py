"""The report's `tls` block (bridge.analysis.tls): per TLS cell, handshakes per
second beside the server's CPU per handshake and what was negotiated; per
runtime and protocol version, what resuming a session saves. Figures and
codes only: the wording is the renderers'."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from bridge.report.codec import EMPTY, NONE, Record, jf
from bridge.report.hw import Hw


class NoCi(enum.Enum):
    """Why a saving has no CI (its `rounds` says how many it had)."""

    NONE = ""  # it has one
    ROUNDS = "rounds"  # fewer paired rounds than a CI needs (bridge.stats.MIN_CI_SAMPLES)


@dataclass(frozen=True)
class TlsNegotiated(Record):
    """What a cell's probe handshake negotiated (bridge.catalog.negotiated):
    None where the runtime does not say; `cert` and `client_cert` are
    certificate fingerprints ("none": no client certificate)."""

    protocol: str
    suite: str
    group: str | None = jf(omit=NONE, default=None)
    sigalg: str | None = jf(omit=NONE, default=None)
    cert: str = ""
    resumed: bool = False
    client_cert: str = ""


@dataclass(frozen=True)
class TlsCell(Record):
    """One TLS cell: the client+server time per handshake (`wall_ns`, the
    cell's median) and its rate, beside the server's CPU per handshake
    (median of the samples' server CPU over their handshakes, with its CI)
    and its share of the wall time; `key` is the server certificate's key
    type, `mutual` says the client presented one."""

    scenario: str
    runtime: str
    call_id: str
    hw: Hw
    resumed: bool
    key: str
    mutual: bool
    wall_ns: float
    handshakes_per_s: float
    server_cpu_ns: float | None = None
    server_cpu_ci95: tuple[float, float] | None = None
    server_share: float | None = None
    negotiated: TlsNegotiated | None = jf(omit=NONE, default=None)


@dataclass(frozen=True)
class TlsSaving(Record):
    """What resuming saves, for one runtime and protocol version: the full
    handshake's time over the resumed one's (`ratio`: 2.0 = resumed takes
    half), and the same of the server's CPU (`server_ratio`), each the
    median of the interleaved rounds' ratios of round medians (the two
    cells are measured in the same rounds), with its CI from `rounds`
    paired rounds of `processes` process pairs (bridge.stats.paired_ratio)."""

    scenario: str
    runtime: str
    hw: Hw
    version: str
    full_call_id: str
    resumed_call_id: str
    ratio: float
    ci95: tuple[float, float] | None = None
    server_ratio: float | None = None
    server_ci95: tuple[float, float] | None = None
    rounds: int = 0
    processes: int = 1
    no_ci: NoCi = jf(omit=lambda r, v: v is NoCi.NONE, default=NoCi.NONE)


@dataclass(frozen=True)
class Tls(Record):
    cells: tuple[TlsCell, ...] = ()
    savings: tuple[TlsSaving, ...] = jf(omit=EMPTY, default=())
