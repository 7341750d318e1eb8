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


# Each option's command-line spellings by its table key ("cache" -> ("--cache", "--no-cache")): offload.options
# fills it from its tables when imported, so a floor under the tables names an option by key alone.
FLAGS: dict[str, tuple[str, ...]] = {}


@dataclass(frozen=True)
class Mention:
    """An option a message names, by its table key (offload.options' mention() makes it from the option's
    table entry; a floor under the tables writes Mention("host_triple")), with the value the message gives it,
    if any: each front end words it (`worded`) when the message is read."""

    keyword: str  # the table's field name: "cuda_path"
    value: str | bool | None = None  # None: the option alone; True/False: a switch on/off
    joined: bool = False  # the flag and its value as one word: "--cudart=static", "-O2"

    @property
    def flag(self) -> str:
        """The command line's flag: "--cuda-path", or the flag of the value False: "--no-cache"."""
        declared = FLAGS.get(self.keyword) or ("--" + self.keyword.replace("_", "-"),)
        return declared[1] if self.value is False and len(declared) > 1 else declared[0]

    def worded(self, wording: str) -> str:
        value = self.value
        if wording == FLAG:
            if value is None or isinstance(value, bool):
                return self.flag
            flag = self.flag
            separator = ("=" if flag.startswith("--") else "") if self.joined else " "
            return f"{flag}{separator}{value}"
        if wording == KEYWORD:
            return self.keyword if value is None else f"{self.keyword}={value}"
        key = self.keyword.replace("_", "-")
        if value is None:
            return key
        return f"{key} = {str(value).lower()}" if isinstance(value, bool) else f'{key} = "{value}"'


Part = str | Mention


Words = str | tuple[Part, ...]  # a message, or the parts of one naming options


def parts_of(words: Words) -> tuple[Part, ...]:
    return (words,) if isinstance(words, str) else words


def worded(parts: tuple[Part, ...], wording: str) -> str:
    """The parts of a sentence with each option they name spelled as `wording` (FLAG, KEYWORD or KEY) spells it."""
    return "".join(part if isinstance(part, str) else part.worded(wording) for part in parts)


class OffloadError(Exception):
    """A user-facing error: the CLI prints it on one line and exits 1. `message` may be the parts of a
    sentence naming options (Mention): `.message` words them as flags, `.worded(KEYWORD)` as the API's keywords."""

    def __init__(self, message: str | tuple[Part, ...] | list[Part], location: Location | None = None):
        self.parts: tuple[Part, ...] = (message,) if isinstance(message, str) else tuple(message)
        super().__init__(message)
        self.location = location

    @property
    def message(self) -> str:
        """The message as the command line words it (worded when read: the tables' flags are known by then)."""
        return self.worded(FLAG)

    def __str__(self) -> str:
        return self.message

    def worded(self, wording: str) -> str:
        """The message with each option it names spelled as `wording` (FLAG, KEYWORD or KEY) spells it."""
        return worded(self.parts, wording)

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
