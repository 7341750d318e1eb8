"""Project configuration: `mlir-offload.toml`, found by walking up from the input; flags override it.

Every key is the long name of a command-line flag (`opt-level = 2` is `-O2` / `--opt-level 2`), so a
setting reads the same in a Makefile and in the file. The keys, their checks and defaults are the
options tables' (offload/options/compile.py and link.py); this module finds, reads and checks the file.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from offload.errors import Location, OffloadError, warn_when_done
from offload.fsutil import current_folder, current_folder_error, read_input, refuse_endless_device
from offload.options import TOML_SPECS
from offload.options.spec import check_toml_value, describe
from offload.trust import TRUSTED_CONFIG_ENVIRONMENT, config_problem

CONFIG_NAME = "mlir-offload.toml"


# ---- positions of keys in the TOML text (tomllib gives none) --------------------------------------


class _Scanner:
    """A tiny TOML tokenizer that records where each key of the document starts (1-based line, col).

    It understands exactly what it must skip to stay in step: comments, the four string forms,
    arrays and inline tables (which may span lines). The file was already accepted by tomllib.
    """

    def __init__(self, text: str):
        self.text = text
        self.i = 0
        self.line = 1
        self.line_start = 0
        self.positions: dict[tuple[str, ...], tuple[int, int]] = {}

    def pos(self) -> tuple[int, int]:
        return self.line, self.i - self.line_start + 1

    def peek(self, n: int = 1) -> str:
        return self.text[self.i : self.i + n]

    def advance(self, n: int = 1) -> None:
        for _ in range(n):
            if self.i < len(self.text) and self.text[self.i] == "\n":
                self.line += 1
                self.line_start = self.i + 1
            self.i += 1

    def skip_space(self, newlines: bool) -> None:
        while self.i < len(self.text):
            c = self.text[self.i]
            if c in " \t\r" or (newlines and c == "\n"):
                self.advance()
            elif c == "#":
                while self.i < len(self.text) and self.text[self.i] != "\n":
                    self.advance()
            else:
                return

    def read_string(self) -> str:
        for quote in ('"""', "'''"):
            if self.peek(3) == quote:
                self.advance(3)
                start = self.i
                while self.i < len(self.text):
                    if self.peek(3) == quote and not (quote == '"""' and self._escaped()):
                        extra = 0  # up to two more quotes belong to the content
                        while extra < 2 and self.text[self.i + 3 + extra : self.i + 4 + extra] == quote[0]:
                            extra += 1
                        value = self.text[start : self.i + extra]
                        self.advance(3 + extra)
                        return value
                    self.advance()
                return self.text[start:]
        quote = self.peek()
        self.advance()
        chars = []
        while self.i < len(self.text) and self.peek() != quote:
            if quote == '"' and self.peek() == "\\":
                chars.append(self.text[self.i : self.i + 2])
                self.advance(2)
                continue
            chars.append(self.peek())
            self.advance()
        self.advance()
        raw = "".join(chars)
        return tomllib.loads(f"k = {quote}{raw}{quote}")["k"] if quote == '"' else raw

    def _escaped(self) -> bool:
        backslashes = 0
        j = self.i - 1
        while j >= 0 and self.text[j] == "\\":
            backslashes += 1
            j -= 1
        return backslashes % 2 == 1

    def read_key(self) -> list[tuple[str, tuple[int, int]]]:
        parts = []
        while True:
            self.skip_space(newlines=False)
            where = self.pos()
            if self.peek() in ('"', "'"):
                parts.append((self.read_string(), where))
            else:
                start = self.i
                while self.i < len(self.text) and (self.text[self.i].isalnum() or self.text[self.i] in "-_"):
                    self.advance()
                parts.append((self.text[start : self.i], where))
            self.skip_space(newlines=False)
            if self.peek() != ".":
                return parts
            self.advance()

    def skip_value(self) -> None:
        self.skip_space(newlines=False)
        depth = 0
        while self.i < len(self.text):
            c = self.peek()
            if c in ('"', "'"):
                self.read_string()
                continue
            if c == "#":
                self.skip_space(newlines=False)
                continue
            if c in "[{":
                depth += 1
            elif c in "]}":
                depth -= 1
            elif c == "\n" and depth == 0:
                return
            self.advance()

    def scan(self) -> dict[tuple[str, ...], tuple[int, int]]:
        table: tuple[str, ...] = ()
        while True:
            self.skip_space(newlines=True)
            if self.i >= len(self.text):
                return self.positions
            if self.peek() == "[":
                double = self.peek(2) == "[["
                self.advance(2 if double else 1)
                parts = self.read_key()
                table = tuple(name for name, _ in parts)
                self.positions.setdefault(table, parts[0][1])
                self.advance(2 if double else 1)
                continue
            parts = self.read_key()
            names = table
            for name, where in parts:
                names = names + (name,)
                self.positions.setdefault(names, where)
            self.advance()  # '='
            self.skip_value()


def key_positions(text: str) -> dict[tuple[str, ...], tuple[int, int]]:
    """Map each key path of a valid TOML document to the (line, column) where its name starts."""
    return _Scanner(text).scan()


# ---- loading ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ProjectConfig:
    path: Path
    values: dict[str, Any]  # key -> checked value (paths made absolute)
    lines: dict[str, int]  # key -> line of the key in the file

    def origin(self, key: str) -> str:
        return f"{self.path}:{self.lines[key]}"


def find_config(start: str | os.PathLike | None) -> Path | None:
    """The nearest mlir-offload.toml in the folder of `start` (a file or folder) or above it."""
    if start is None:
        start = current_folder()
        if start is None:
            raise current_folder_error(f"{CONFIG_NAME} is looked for from it")
    try:
        here = Path(os.path.realpath(start))  # a link loop stays as named (its read reports it)
    except OSError:  # a relative name and no current folder to resolve it in
        raise current_folder_error(f"'{start}' is relative to it") from None
    try:
        is_folder = here.is_dir()
    except OSError:  # e.g. a name too long for the file system: the input's own read reports it
        is_folder = False
    if not is_folder:
        here = here.parent
    for folder in (here, *here.parents):
        candidate = folder / CONFIG_NAME
        if candidate.is_file():
            return candidate
        if os.path.lexists(candidate):  # a folder, device or dangling link: never silently passed over
            raise OffloadError(f"'{candidate}' is not a file: a project's {CONFIG_NAME} must be a regular file")
    return None


def _syntax_location(path: Path, error: tomllib.TOMLDecodeError, text: str = "") -> tuple[Location, str]:
    # Python's tomllib ends its messages with "(at line L, column C)" and has no attributes for them
    # before 3.14; take them off the end when they are there.
    message = str(error)
    if message.endswith(" (at end of document)"):  # the end: the last line, after its last character
        lines = text.rstrip("\n").split("\n")
        where = Location(str(path), len(lines), len(lines[-1]) + 1)
        return where, message.removesuffix(" (at end of document)") + " at the end of the file"
    head, sep, tail = message.rpartition(" (at line ")
    if sep and tail.endswith(")"):
        line_text, _, col_text = tail[:-1].partition(", column ")
        if line_text.isdigit() and col_text.isdigit():
            return Location(str(path), int(line_text), int(col_text)), head
    if getattr(error, "lineno", None):
        return Location(str(path), error.lineno, error.colno), getattr(error, "msg", message)
    return Location(str(path)), message


def load_config(path: str | os.PathLike) -> ProjectConfig | None:
    """Read and check one mlir-offload.toml: unknown keys and wrong types are errors at file:line:col.
    None, after one warning line, when it is not trusted (offload/trust.py): another user's, or one
    others can write, unless MLIR_OFFLOAD_TRUSTED_CONFIG names it."""
    path = Path(path)
    text_bytes = _read_trusted(path)
    if text_bytes is None:
        return None
    try:
        text = text_bytes.decode("utf-8")
        data = tomllib.loads(text)
    except UnicodeDecodeError:
        raise OffloadError("configuration is not UTF-8 text", Location(str(path))) from None
    except RecursionError:  # tomllib recurses once per nested array or inline table
        raise OffloadError("invalid TOML: arrays or tables nested too deep", Location(str(path))) from None
    except tomllib.TOMLDecodeError as e:
        location, message = _syntax_location(path, e, text)
        raise OffloadError(f"invalid TOML: {message}", location) from None
    positions = key_positions(text)

    def where(key: str) -> Location:
        line, col = positions.get((key,), (None, None))
        return Location(str(path), line, col)

    values: dict[str, Any] = {}
    lines: dict[str, int] = {}
    for key in data:  # document order: the first problem in the file is the one reported
        declared = TOML_SPECS.get(key)
        if declared is None:
            hint = ""
            alt = key.replace("_", "-")
            if alt in TOML_SPECS:
                hint = f" (did you mean '{alt}'?)"
            elif isinstance(data[key], dict):
                hint = " (tables are not used: every key is a flag name at the top level)"
            raise OffloadError(f"unknown key '{key}'{hint}", where(key))
        try:
            values[key] = check_toml_value(declared[0], data[key], str(path.parent))  # a shared key: one kind
        except TypeError as e:
            got = describe(data[key], declared[0].secret)
            raise OffloadError(f"key '{key}' expects {e.args[0]}, got {got}", where(key)) from None
        lines[key] = where(key).line or 1
    return ProjectConfig(path, values, lines)


def _read_trusted(path: Path) -> bytes | None:
    """The file's bytes, judged by the owner and mode of what was opened (so that what is checked is what
    is read); None after one warning naming the file and how to trust it."""
    try:
        handle = open(path, "rb")
    except OSError:
        return read_input(path)  # the read's own one-line error
    with handle:
        problem = config_problem(os.fstat(handle.fileno()), path)
        if problem is None:
            refuse_endless_device(handle.fileno(), f"'{path}'")
            try:
                return handle.read()
            except OSError as e:
                raise OffloadError(f"cannot read '{path}': {e.strerror}") from None
    warn_when_done(
        f"mlir-offload: warning: {path} is not applied: it {problem}; to apply it, add its folder to "
        f"{TRUSTED_CONFIG_ENVIRONMENT} (docs/cli.md)"
    )
    return None


def project_config(start: str | os.PathLike | None) -> ProjectConfig | None:
    """The mlir-offload.toml in effect for an input (found by walking up from it), read and checked once."""
    found = find_config(start)
    return load_config(found) if found else None


def link_config() -> ProjectConfig | None:
    """The mlir-offload.toml of a link: the one in effect for the current folder (as `config --ldflags`
    finds it). None, after a warning, where that folder is gone: a link of absolute paths still works."""
    here = current_folder()
    if here is None:
        warn_when_done(
            "mlir-offload: warning: the current folder is gone or unreadable: no mlir-offload.toml was looked for"
        )
        return None
    return project_config(here)


def render_toml_value(value: Any) -> str:
    """A value in TOML spelling, for `config show` (its output is itself a valid mlir-offload.toml)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(render_toml_value(v) for v in value) + "]"
    text = str(value).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'
