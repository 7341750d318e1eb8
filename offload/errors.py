"""The one error type every user-facing failure is raised as, with its compiler-style rendering."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Location:
    file: str
    line: int | None = None
    col: int | None = None

    def __str__(self) -> str:
        parts = [self.file]
        if self.line is not None:
            parts.append(str(self.line))
            if self.col is not None:
                parts.append(str(self.col))
        return ":".join(parts)


# How a front end spells an option a message names: the command line's flag (--cuda-path DIR), the Python
# API's keyword (cuda_path=DIR), mlir-offload.toml's key (cuda-path = "DIR").
FLAG, KEYWORD, KEY = "flag", "keyword", "key"


@dataclass(frozen=True)
class Mention:
    """An option a message names (offload.options' mention() makes it from the option's table entry), with
    the value the message gives it, if any: each front end words it (`worded`)."""

    flag: str  # "--cuda-path", or the flag of the value False: "--no-cache"
    keyword: str  # the table's field name: "cuda_path"
    value: str | bool | None = None  # None: the option alone; True/False: a switch on/off
    joined: bool = False  # the flag and its value as one word: "--cudart=static", "-O2"

    def worded(self, wording: str) -> str:
        value = self.value
        if wording == FLAG:
            if value is None or isinstance(value, bool):
                return self.flag
            separator = ("=" if self.flag.startswith("--") else "") if self.joined else " "
            return f"{self.flag}{separator}{value}"
        if wording == KEYWORD:
            return self.keyword if value is None else f"{self.keyword}={value}"
        key = self.keyword.replace("_", "-")
        if value is None:
            return key
        return f"{key} = {str(value).lower()}" if isinstance(value, bool) else f'{key} = "{value}"'


Part = str | Mention


class OffloadError(Exception):
    """A user-facing error: the CLI prints it on one line and exits 1. `message` may be the parts of a
    sentence naming options (Mention): `.message` words them as flags, `.worded(KEYWORD)` as the API's keywords."""

    def __init__(self, message: str | tuple[Part, ...] | list[Part], location: Location | None = None):
        self.parts: tuple[Part, ...] = (message,) if isinstance(message, str) else tuple(message)
        self.message = self.worded(FLAG)
        super().__init__(self.message)
        self.location = location

    def worded(self, wording: str) -> str:
        """The message with each option it names spelled as `wording` (FLAG, KEYWORD or KEY) spells it."""
        return "".join(part if isinstance(part, str) else part.worded(wording) for part in self.parts)

    def names(self) -> tuple[str, ...]:
        """The options the message names (their table field names), in order."""
        return tuple(part.keyword for part in self.parts if isinstance(part, Mention))

    def render(self) -> str:
        # One line, compiler style: file:line:col: error: ... or mlir-offload: error: ...
        prefix = str(self.location) if self.location else "mlir-offload"
        return one_line(f"{prefix}: error: {self.message}")


def one_line(text: str) -> str:
    """`text` on one line: line breaks (a file name may hold one) and other control characters escaped;
    surrogate escapes (undecodable bytes of a file name) are kept for the caller to print as bytes."""
    return "".join(c if c.isprintable() or c == "\t" or "\udc80" <= c <= "\udcff" else repr(c)[1:-1] for c in text)


_DEFERRED: list[str] = []


def warn_when_done(line: str) -> None:
    """A warning about something the command works around (an unusable cache): printed once, after the
    command succeeded; a command failing for another reason prints its error alone."""
    if line not in _DEFERRED:
        _DEFERRED.append(line)


def pending_warnings() -> bool:
    return bool(_DEFERRED)


def take_deferred_warnings() -> list[str]:
    lines = list(_DEFERRED)
    _DEFERRED.clear()
    return lines
