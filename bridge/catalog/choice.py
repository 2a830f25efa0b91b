"""The base of bridge's closed sets: a str enum whose members are the strings
reports and options have always held.

A member is the str it names, so JSON writes the same text as before and a
member equals (and hashes as) its text; str() and format() give the value on
Python 3.10 as well, as enum.StrEnum of 3.11 does.
"""

from __future__ import annotations

from enum import Enum
from typing import TypeVar

from bridge.errors import UsageError

_C = TypeVar("_C", bound="Choice")


class Choice(str, Enum):
    # What enum.StrEnum adds to str + Enum: the value as str() and format()
    # (f"{Hw.ON}" is "on"), and iteration and comparison as before.
    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)

    @classmethod
    def _missing_(cls, value: object) -> None:
        """A value that is none of the members: ValueError saying which are."""
        shown = ascii(value)  # quoted, escaped: a report's text reaches a terminal
        shown = shown if len(shown) <= 40 else shown[:37] + "..."
        raise ValueError(f"{shown} is not one of {', '.join(cls)}")

    @classmethod
    def parse(cls: type[_C], value: object, where: str) -> _C:
        """`value` as a member, or a one-line UsageError that starts with `where`."""
        try:
            return cls(value)
        except ValueError as exc:
            raise UsageError(f"{where}: {exc}") from None
