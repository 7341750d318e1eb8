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


class OffloadError(Exception):
    """A user-facing error: the CLI prints it on one line and exits 1."""

    def __init__(self, message: str, location: Location | None = None):
        super().__init__(message)
        self.message = message
        self.location = location

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
