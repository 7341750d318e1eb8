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
        message = " ".join(self.message.split("\n"))
        prefix = str(self.location) if self.location else "mlir-offload"
        return f"{prefix}: error: {message}"
