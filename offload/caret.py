"""Located errors as clang and mlir-opt show them on a terminal: the one-line message, then the source
line and a caret under the column, in colour unless NO_COLOR is set. Piped or logged output keeps one
line per error; -fcaret-diagnostics / -fno-caret-diagnostics (clang's flags) choose either way."""

from __future__ import annotations

import os

from offload.errors import Location, one_line

CARET_FLAGS = {"-fcaret-diagnostics": True, "-fno-caret-diagnostics": False}
# Longest source line shown whole; a longer one is cut around the column.
SHOWN_WIDTH = 200
BOLD, RED, GREEN, RESET = "\033[1m", "\033[1;31m", "\033[1;32m", "\033[0m"
SOURCE_LIMIT = 64 << 20  # a larger "source" is not read for one line


def take_caret_flag(argv: list[str]) -> tuple[list[str], bool | None]:
    """`argv` without the caret flags, and the last one's choice (None: not given)."""
    chosen = None
    kept = []
    for word in argv:
        if word in CARET_FLAGS:
            chosen = CARET_FLAGS[word]
        else:
            kept.append(word)
    return kept, chosen


def wants_caret(chosen: bool | None, stream) -> bool:
    if chosen is not None:
        return chosen
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def wants_colour(stream) -> bool:
    try:
        terminal = stream.isatty()
    except (AttributeError, ValueError):
        terminal = False
    return terminal and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"


def source_line(location: Location) -> str | None:
    """The text of the location's line, or None when it cannot be shown (no line, stdin, not a file)."""
    if location.line is None or location.line < 1:
        return None
    try:
        if not os.path.isfile(location.file) or os.path.getsize(location.file) > SOURCE_LIMIT:
            return None
        with open(location.file, "rb") as f:
            for number, raw in enumerate(f, 1):
                if number == location.line:
                    return raw.rstrip(b"\r\n").decode("utf-8", errors="replace")
    except OSError:
        return None
    return None


def render(line: str, location: Location | None, colour: bool) -> str:
    """The error `line` (location first), followed by its source line and caret where one can be shown."""
    text = one_line(line)
    if colour:
        head, sep, rest = text.partition(": error: ")
        text = f"{BOLD}{head}: {RED}error:{RESET}{BOLD} {rest}{RESET}" if sep else text
    source = source_line(location) if location else None
    if source is None or location is None:
        return text
    column = max((location.col or 1) - 1, 0)
    start = max(0, column - SHOWN_WIDTH // 2) if len(source) > SHOWN_WIDTH else 0
    shown = one_line(source[start : start + SHOWN_WIDTH])
    # The caret line keeps the source's tabs so the caret lands under the column as the terminal shows it.
    pad = "".join(c if c == "\t" else " " for c in source[start:column])
    caret = f"{GREEN}^{RESET}" if colour else "^"
    return f"{text}\n{shown}\n{pad}{caret}"


__all__ = ["render", "source_line", "take_caret_flag", "wants_caret", "wants_colour"]
