"""One record <-> JSON codec for every record of a report (bridge.report.schema,
bridge.report.levels).

A record is a frozen dataclass deriving from `Record`. Each field is written
under its name, in field order, and read back by its type (lists become the
tuples a record stores, nested records and lists of records are read as
records, a `X | None` field takes null). What differs from that is said on
the field, with `jf(...)`:

- `key`: the JSON key, when it is not the field's name;
- `omit(record, value)`: true when the key is not written (a key added later
  is written only when set, so older reports re-serialise as they were);
- `missing`: the value when an older report lacks the key (a field with a
  default uses its default; a field with neither is required);
- `encode` / `decode`: the JSON form, when the type does not say it;
- `flat`: the field's keys are the parent's own (a record: its keys; a dict:
  every key no other field claims; with `decode`, a record of a sum type
  chosen by another of the parent's keys: `decode` reads the parent's whole
  object);
- `write=False`: kept in memory, never written (derived from other keys).

And on the record, for what is not one field:

- `json_order`: the key order, when it is not the field order (reports keep
  the order they have always had; a key not listed comes after the listed);
- `json_derived(self)`: keys written but not stored (figures computed from
  the raw data, for readers of the JSON), each named in `json_derived_keys`;
- `json_read(cls, data)`: constructor values computed from the data (a
  default taken from another key, a stored figure read from a derived one);
- `json_as_read`: a record whose keys depend on the bridge that wrote it
  (the run's settings, the machine, a runtime's provenance). Read from JSON,
  it writes back the keys it was read with, in their order, and nothing
  else: an older report lacks keys that are now always written (null
  included) and keeps lacking them, so it re-serialises byte for byte. Such
  a record keeps every key it does not know in a flat dict field, `extra`,
  written back where it stood: schema 1 grows by optional keys, and a report
  of a newer bridge passes through an older one unchanged. A record made in
  memory (or changed with dataclasses.replace) writes its keys by the rules
  above.
"""

from __future__ import annotations

import copy
import dataclasses
import enum
import functools
import types
import typing
from collections.abc import Callable
from dataclasses import MISSING, dataclass
from typing import Any, ClassVar, TypeVar

Json = dict[str, Any]
R = TypeVar("R", bound="Record")


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()  # `missing`: the key must be there


@dataclass(frozen=True)
class Spec:
    key: str | None = None
    omit: Callable[[Any, Any], bool] | None = None
    missing: Any = REQUIRED
    encode: Callable[[Any], Any] | None = None
    decode: Callable[[Any], Any] | None = None
    flat: bool = False
    write: bool = True


def jf(*, default: Any = MISSING, default_factory: Any = MISSING, **json: Any) -> Any:
    """A dataclass field with its JSON form: `json` holds Spec's keywords
    (key, omit, missing, encode, decode, flat, write; see the module)."""
    spec = Spec(**json)  # a keyword Spec does not have is a TypeError
    return dataclasses.field(
        default=default, default_factory=default_factory, metadata={"json": spec}
    )


# Common omit rules.
def EMPTY(record: Any, value: Any) -> bool:
    return not value


def NONE(record: Any, value: Any) -> bool:
    return value is None


class Record:
    """A report record: `to_json` and `from_json` come from the codec."""

    json_order: ClassVar[tuple[str, ...]] = ()
    json_as_read: ClassVar[bool] = False  # written back with the keys it was read with
    json_derived_keys: ClassVar[tuple[str, ...]] = ()  # what json_derived may write

    def json_derived(self) -> Json:
        return {}

    @classmethod
    def json_read(cls, data: Json) -> Json:
        return {}

    def to_json(self) -> Json:
        return to_json(self)

    @classmethod
    def from_json(cls: type[R], data: Json) -> R:
        return from_json(cls, data)


@dataclass(frozen=True)
class Field:
    name: str
    key: str
    hint: Any
    spec: Spec
    default: Any  # MISSING: required
    factory: bool = False  # default is a default_factory


@functools.cache
def fields(cls: type) -> tuple[Field, ...]:
    """The fields of a record with their JSON form and resolved types."""
    hints = typing.get_type_hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        spec = f.metadata.get("json", Spec())
        default, factory = (MISSING if spec.missing is REQUIRED else spec.missing), False
        if default is MISSING and f.default is not MISSING:
            default = f.default
        elif default is MISSING and f.default_factory is not MISSING:
            default, factory = f.default_factory, True
        out.append(Field(f.name, spec.key or f.name, hints[f.name], spec, default, factory))
    return tuple(out)


def keys(cls: type) -> list[str]:
    """The keys a record can write (a flat record's keys included; a flat
    dict's keys are anyone's and not listed), derived ones last."""
    return [*field_keys(cls), *cls.json_derived_keys]


def field_keys(cls: type) -> list[str]:
    out = []
    for f in fields(cls):
        if not f.spec.write:
            continue
        if f.spec.flat:
            if _is_record(f.hint):
                out += keys(f.hint)
            continue
        out.append(f.key)
    return out


# -- writing -----------------------------------------------------------------


# Where a record read from JSON keeps the keys it was read with (json_as_read):
# an attribute, not a field, so equality ignores it and `replace` drops it.
_READ = "_json_keys"


def to_json(record: Record) -> Json:
    out: Json = {}
    read: tuple[str, ...] | None = getattr(record, _READ, None)
    for f in fields(type(record)):
        value = getattr(record, f.name)
        if not f.spec.write:
            continue
        if read is not None:
            if not f.spec.flat and f.key not in read:
                continue
        elif f.spec.omit is not None and f.spec.omit(record, value):
            continue
        encoded = f.spec.encode(value) if f.spec.encode else plain(value)
        if f.spec.flat:
            out.update(encoded)
        else:
            out[f.key] = encoded
    derived = record.json_derived()
    undeclared = set(derived) - set(type(record).json_derived_keys)
    if undeclared:
        raise TypeError(f"{type(record).__name__} derives undeclared keys {sorted(undeclared)}")
    out.update(derived)
    order = read if read is not None else type(record).json_order
    if not order:
        return out
    return {**{k: out[k] for k in order if k in out}, **out}


def plain(value: Any) -> Any:
    """A value as JSON: records as objects, tuples as lists, enums as their values."""
    if isinstance(value, Record):
        return to_json(value)
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (tuple, list)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


# -- reading -----------------------------------------------------------------


def from_json(cls: type[R], data: Json) -> R:
    if not isinstance(data, dict):
        raise TypeError(f"{cls.__name__}: expected an object, got {_kind(data)}")
    kwargs: Json = {}
    claimed = set(keys(cls))  # a flat dict takes the others
    for f in fields(cls):
        if f.spec.flat:
            if f.spec.decode is not None:
                kwargs[f.name] = _at(f.key, f.spec.decode, data)
            elif _is_record(f.hint):
                kwargs[f.name] = from_json(f.hint, data)
            else:
                kwargs[f.name] = {k: v for k, v in data.items() if k not in claimed}
            continue
        if not f.spec.write:
            continue
        if f.key not in data:
            if f.default is MISSING:
                raise KeyError(f.key)
            default = f.default() if f.factory else f.default
            kwargs[f.name] = copy.copy(default) if isinstance(default, (dict, list)) else default
            continue
        value = data[f.key]
        try:
            kwargs[f.name] = f.spec.decode(value) if f.spec.decode else decode(f.hint, value)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"{f.key}: {exc}") from None
    kwargs.update(cls.json_read(data))
    record = cls(**kwargs)
    if cls.json_as_read:
        object.__setattr__(record, _READ, tuple(data))
    return record


def _at(key: str, read: Callable[[Any], Any], value: Any) -> Any:
    """`read(value)`, its TypeError or ValueError naming `key`."""
    try:
        return read(value)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"{key}: {exc}") from None


def decode(hint: Any, value: Any) -> Any:
    """A JSON value read as the type says (tuples, records, Optional), or a
    TypeError/ValueError that Report.from_json turns into one line."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        options = [a for a in args if a is not type(None)]
        return decode(_pick(options, value), value)
    if value is None and hint is not Any:
        raise TypeError("null where a value is required")
    if hint in SCALARS:
        return _scalar(hint, value)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return hint(value)  # ValueError: not one of its values
    if _is_record(hint):
        return from_json(hint, value)
    # A tuple as well as a list: a record made in memory from its JSON form
    # (a runtime's details, bridge.report.provenance) may hold tuples.
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            raise TypeError(f"expected a list, got {_kind(value)}")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(decode(args[0], v) for v in value)
        if len(value) != len(args):
            raise ValueError(f"expected {len(args)} values, got {len(value)}")
        return tuple(decode(a, v) for a, v in zip(args, value, strict=True))
    if origin is list:
        if not isinstance(value, (list, tuple)):
            raise TypeError(f"expected a list, got {_kind(value)}")
        return [decode(args[0], v) for v in value] if args else list(value)
    if origin is dict:
        if not isinstance(value, dict):
            raise TypeError(f"expected an object, got {_kind(value)}")
        return {k: decode(args[1], v) for k, v in value.items()} if args else dict(value)
    if hint is dict:
        if not isinstance(value, dict):
            raise TypeError(f"expected an object, got {_kind(value)}")
        return dict(value)
    return value


# A JSON number, string or boolean is read as it is (an integer in a float
# field stays an integer, so it is written back as it was), or refused.
SCALARS = {int: "an integer", float: "a number", str: "a string", bool: "true or false"}


def _scalar(hint: type, value: Any) -> Any:
    ok = isinstance(value, bool) if hint is bool else not isinstance(value, bool)
    accepts = (int, float) if hint is float else hint
    if ok and isinstance(value, accepts):
        return value
    raise TypeError(f"expected {SCALARS[hint]}, got {_kind(value)}")


def _kind(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    return names.get(type(value), "a number")


def _pick(options: list[Any], value: Any) -> Any:
    """The member of a union a JSON value is (a list: the tuple)."""
    container = isinstance(value, (list, tuple))
    for a in options:
        if container == (typing.get_origin(a) in (tuple, list)):
            return a
    return options[0]


def _is_record(hint: Any) -> bool:
    return isinstance(hint, type) and issubclass(hint, Record)
