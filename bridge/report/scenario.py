"""What a run ran: the report's `scenarios`, one record each.

A scenario's keys depend on its kind (bridge.catalog.scenario: a MAC has a
digest, a key and a MAC length, a cipher its name, a TLS scenario its
group...), so the kind-specific fields are optional here and a scenario has
those of its kind. The record is the report's data, not the catalog's
validated scenario: a replay parses it again (bridge.catalog.scenario.parse,
bridge.cli.replay) with every bound a scenario file has, so a report of an
older bridge still loads whatever the catalog now says of its calls.

Written back as read (codec `json_as_read`): which keys a scenario has
depends on the bridge that wrote it (an import's are a name and a
description only). A key this bridge does not know stays in `extra`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from bridge.catalog import scenario as catalog
from bridge.catalog.usercode import UserRuntime
from bridge.catalog.vocab import ScenarioKind
from bridge.report.codec import EMPTY, NONE, Record, jf


@dataclass(frozen=True)
class UserCallRun(Record):
    """One of the user's own calls a scenario timed (bridge.catalog.usercode),
    verbatim: a replay shows each and runs it only with the user's say-so.
    The schema allows no other key here (no `extra`)."""

    runtime: UserRuntime
    expr: str
    label: str = jf(omit=EMPTY, default="")
    checked: bool = True

    json_as_read: ClassVar[bool] = True


def _default_cert(record: Any, value: Any) -> bool:
    # Written only where it differs, as the catalog writes it.
    return value == catalog.DEFAULT_TLS_CERT


@dataclass(frozen=True)
class ScenarioRun(Record):
    """One scenario as the run had it (sizes and calls after --sizes and
    --with). `kind` is None for a report of pasted `openssl speed` output,
    whose scenarios are an algorithm's name and where it came from."""

    name: str
    description: str = ""
    kind: ScenarioKind | None = jf(omit=NONE, default=None)
    # The kind's own keys (None: not this kind's).
    digest: str | None = jf(omit=NONE, default=None)  # hash, file-digest, mac, sign, kdf, rsa
    bits: int | None = jf(omit=NONE, default=None)  # rsa
    key_bytes: int | None = jf(omit=NONE, default=None)  # mac, kdf
    salt_bytes: int | None = jf(omit=NONE, default=None)  # kdf
    group: str | None = jf(omit=NONE, default=None)  # tls
    cert: str = jf(omit=_default_cert, default=catalog.DEFAULT_TLS_CERT)  # tls: its key type
    client_cert: bool = jf(omit=EMPTY, default=False)  # tls: mutual
    sizes: tuple[int, ...] = jf(omit=EMPTY, default=())
    mac_bytes: int | None = jf(omit=NONE, default=None)  # mac: 0 is the full MAC
    features: tuple[str, ...] = jf(omit=EMPTY, default=())
    # Runtime kind -> the catalog's call ids (bridge.catalog.calls).
    calls: dict[str, tuple[str, ...]] = jf(omit=EMPTY, default_factory=dict)
    user_calls: tuple[UserCallRun, ...] = jf(omit=EMPTY, default=())
    source: str = jf(omit=EMPTY, default="")  # where the benchmark comes from
    cipher: str | None = jf(omit=NONE, default=None)  # cipher
    curve: str | None = jf(omit=NONE, default=None)  # sign, eddsa, agreement
    concurrency: tuple[int, ...] = jf(omit=EMPTY, default=())  # levels (--concurrency)
    extra: dict[str, Any] = jf(flat=True, default_factory=dict)

    json_as_read: ClassVar[bool] = True
    # As bridge.catalog.scenario writes them; a record read keeps its own.
    json_order: ClassVar[tuple[str, ...]] = (
        *("name", "description", "kind", "digest", "bits", "key_bytes", "salt_bytes"),
        *("group", "cert", "client_cert", "sizes", "mac_bytes", "features"),
        *("calls", "user_calls", "source", "cipher", "curve", "concurrency"),
    )

    @classmethod
    def of(cls, sc: catalog.Scenario) -> ScenarioRun:
        """A scenario the run ran, as its data: what a replay parses again."""
        return cls.from_json(sc.to_json())

    @classmethod
    def read(cls, data: ScenarioRun | Mapping[str, Any]) -> ScenarioRun:
        """A record, or one made in memory from its JSON object (read as a
        report's is, so that it writes that object as given)."""
        return data if isinstance(data, ScenarioRun) else cls.from_json(dict(data))

    @property
    def size_unit(self) -> str:
        """What its sizes count (bytes for an import, which has no kind)."""
        return catalog.size_unit(self.kind)

    @property
    def limit_algorithm(self) -> str:
        """The algorithm whose openssl limit its cells are held to (a hash's
        or a MAC's digest, a cipher's name); "" for the other kinds."""
        return self.digest or self.cipher or ""

    @property
    def user_code(self) -> bool:
        """Whether it runs the user's own code (bridge time, [[calls]])."""
        return bool(self.user_calls) or self.kind == ScenarioKind.EXPR
