"""Project configuration: `mlir-offload.toml`, found by walking up from the input; flags override it.

Every key is the long name of a command-line flag (`opt-level = 2` is `-O2` / `--opt-level 2`), so a
setting reads the same in a Makefile and in the file. Each effective value remembers where it came
from (flag, file:line, default) for `mlir-offload config show`.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from offload.errors import Location, OffloadError
from offload.formats.profiles import DEFAULT_TARGET_CLANG
from offload.fsutil import read_input

CONFIG_NAME = "mlir-offload.toml"


# ---- the schema: key -> (python name, checker/normaliser, default, help) -------------------------

def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError("a string")
    return value


def _bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError("true or false")
    return value


def _opt_level(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 3:
        raise TypeError("an integer from 0 to 3")
    return value


def _clang_major(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise TypeError("a clang major version (an integer such as 22)")
    return value


def _host_triple(value: Any) -> str:
    from offload.errors import OffloadError
    from offload.formats.hosts import host_triple, supported

    try:
        return host_triple(_str(value)).name
    except OffloadError:
        raise TypeError(f"a supported host triple ({supported()})") from None


def _arch_list(value: Any) -> str:
    # "sm_80,gfx90a" or ["sm_80", "gfx90a"]; kept as the flag's comma-separated spelling.
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, list) and value and all(isinstance(v, str) and v.strip() for v in value):
        return ",".join(value)
    raise TypeError('an architecture list such as "sm_80,sm_90" or ["sm_80", "gfx90a"]')


def _path_list(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise TypeError("a list of file paths")


def _choice(*choices: str) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        if value not in choices:
            raise TypeError("one of " + ", ".join(f'"{c}"' for c in choices))
        return value
    return check


def _redis_url(value: Any) -> str:
    if not isinstance(value, str) or not value.startswith(("redis://", "rediss://")):
        raise TypeError('a Redis URL such as "redis://HOST:6379/0" or "rediss://HOST:6380/0"')
    return value


def _seconds(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise TypeError("a number of seconds (0: no expiry)")
    return value


@dataclass(frozen=True)
class Key:
    name: str  # the TOML key and the flag's long name
    check: Callable[[Any], Any]
    default: Any
    help: str
    is_path: bool = False  # relative paths in the file are relative to the file's folder
    secret: bool = False  # a URL whose password no output shows (config show redacts it)


KEYS: tuple[Key, ...] = (
    Key("offload-arch", _arch_list, None, "GPU architectures, e.g. \"sm_80,sm_90\" or [\"gfx90a\"]"),
    Key("opt-level", _opt_level, 3, "device optimisation level 0-3 (-O)"),
    Key("prec-sqrt", _bool, True, "IEEE-rounded sqrt (false: approximate)"),
    Key("prec-div", _bool, True, "IEEE-rounded division (false: approximate)"),
    Key("ftz", _bool, False, "flush denormals to zero"),
    Key("fast-math", _bool, False, "fast-math flags on device arithmetic"),
    Key("link-bitcode", _path_list, (), "bitcode libraries linked into every device image", is_path=True),
    Key("libdevice", _str, None, "CUDA libdevice.10.bc (default: found in the CUDA toolkit)", is_path=True),
    Key("rocm-device-lib-path", _str, None, "folder of ROCm device libraries (ocml, ockl, oclc)",
        is_path=True),
    Key("target-clang", _clang_major, DEFAULT_TARGET_CLANG, "major version of the clang that links the bundle (its profile)"),
    Key("host-triple", _host_triple, None, "CPU of the machine the executable runs on (default: this machine's)"),
    Key("clang", _str, "clang", "the clang executable that links the bundle (ship, doctor, --ldflags)"),
    Key("cuda-path", _str, None, "CUDA toolkit of the link (default: found)", is_path=True),
    Key("rocm-path", _str, None, "ROCm install of the link (default: found)", is_path=True),
    Key("portable", _bool, False, "cubin+PTX device images and an ELF host object (any LLVM version)"),
    # Unset format keys: the target clang's profile decides (bitcode where it reads ours, else native).
    Key("device-image", _choice("bitcode", "cubin", "ptx"), None,
        "device image format: bitcode (device LTO on the target), cubin, ptx (cubin + PTX beside)"),
    Key("host-format", _choice("bc", "obj"), None, "host part as LLVM bitcode or as an ELF object"),
    Key("cache", _bool, True, "reuse device images of unchanged programs (false: --no-cache)"),
    # The shared tier of the image cache (docs/cache.md); MLIR_OFFLOAD_REMOTE_CACHE* in the environment win.
    Key("remote-cache", _redis_url, None, "redis://HOST:PORT/DB or rediss:// (TLS) server sharing device images "
        "between machines", secret=True),
    Key("remote-cache-mode", _choice("read-write", "read-only"), "read-write",
        "read-only: take images from the remote cache, never write to it"),
    Key("remote-cache-ttl", _seconds, None, "seconds an image lives in the remote cache (default: no expiry)"),
)
KEYS_BY_NAME = {k.name: k for k in KEYS}


def attr_name(key: str) -> str:
    """The Python/click parameter name of a key: opt-level -> opt_level."""
    return key.replace("-", "_")


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
        return self.text[self.i:self.i + n]

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
                        while extra < 2 and self.text[self.i + 3 + extra:self.i + 4 + extra] == quote[0]:
                            extra += 1
                        value = self.text[start:self.i + extra]
                        self.advance(3 + extra)
                        return value
                    self.advance()
                return self.text[start:]
        quote = self.peek()
        self.advance()
        chars = []
        while self.i < len(self.text) and self.peek() != quote:
            if quote == '"' and self.peek() == "\\":
                chars.append(self.text[self.i:self.i + 2])
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
                parts.append((self.text[start:self.i], where))
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
class Setting:
    key: str
    value: Any
    origin: str  # "flag", "<file>:<line>", or "default"


@dataclass(frozen=True)
class ProjectConfig:
    path: Path
    values: dict[str, Any]  # key -> checked value (paths made absolute)
    lines: dict[str, int]  # key -> line of the key in the file

    def origin(self, key: str) -> str:
        return f"{self.path}:{self.lines[key]}"


def find_config(start: str | os.PathLike | None) -> Path | None:
    """The nearest mlir-offload.toml in the folder of `start` (a file or folder) or above it."""
    here = Path(start) if start is not None else Path.cwd()
    here = here.resolve()
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
    return None


def _syntax_location(path: Path, error: tomllib.TOMLDecodeError, text: str = "") -> tuple[Location, str]:
    # Python's tomllib ends its messages with "(at line L, column C)" and has no attributes for them
    # before 3.14; take them off the end when they are there.
    message = str(error)
    if message.endswith(" (at end of document)"):  # the end: the last line, after its last character
        lines = text.rstrip("\n").split("\n")
        return Location(str(path), len(lines), len(lines[-1]) + 1), message[:-len(" (at end of document)")] + " at the end of the file"
    head, sep, tail = message.rpartition(" (at line ")
    if sep and tail.endswith(")"):
        line_text, _, col_text = tail[:-1].partition(", column ")
        if line_text.isdigit() and col_text.isdigit():
            return Location(str(path), int(line_text), int(col_text)), head
    if getattr(error, "lineno", None):
        return Location(str(path), error.lineno, error.colno), getattr(error, "msg", message)
    return Location(str(path)), message


def load_config(path: str | os.PathLike) -> ProjectConfig:
    """Read and check one mlir-offload.toml: unknown keys and wrong types are errors at file:line:col."""
    path = Path(path)
    text_bytes = read_input(path)
    try:
        text = text_bytes.decode("utf-8")
        data = tomllib.loads(text)
    except UnicodeDecodeError:
        raise OffloadError("configuration is not UTF-8 text", Location(str(path))) from None
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
        spec = KEYS_BY_NAME.get(key)
        if spec is None:
            hint = ""
            alt = key.replace("_", "-")
            if alt in KEYS_BY_NAME:
                hint = f" (did you mean '{alt}'?)"
            elif isinstance(data[key], dict):
                hint = " (tables are not used: every key is a flag name at the top level)"
            raise OffloadError(f"unknown key '{key}'{hint}", where(key))
        try:
            value = spec.check(data[key])
        except TypeError as e:
            got = "another string (not shown: it may hold a password)" if spec.secret and \
                isinstance(data[key], str) else _describe(data[key])
            raise OffloadError(f"key '{key}' expects {e.args[0]}, got {got}", where(key)) from None
        if spec.is_path and value is not None:
            value = _absolute(path.parent, value)
        values[key] = value
        lines[key] = where(key).line or 1
    return ProjectConfig(path, values, lines)


def _absolute(base: Path, value: Any) -> Any:
    if isinstance(value, tuple):
        return tuple(str((base / v)) if not os.path.isabs(v) else v for v in value)
    return value if os.path.isabs(value) else str(base / value)


def _describe(value: Any) -> str:
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, int):
        return f"integer {value}"
    if isinstance(value, float):
        return f"float {value}"
    if isinstance(value, str):
        return f'string "{value}"'
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    return type(value).__name__


# ---- merging: flag > file > default -------------------------------------------------------------

def resolve(flags: dict[str, Any], start: str | os.PathLike | None,
            config: ProjectConfig | None | bool = True) -> dict[str, Setting]:
    """Effective settings. `flags` maps key or python names to values (None/() = not given on the
    command line); `start` is the input whose folder the search for mlir-offload.toml starts from.
    `config=True` searches, None/False uses no file, a ProjectConfig is used as is."""
    if config is True:
        found = find_config(start)
        config = load_config(found) if found else None
    given = {attr_name(k): v for k, v in flags.items()}
    settings = {}
    for spec in KEYS:
        flag_value = given.get(attr_name(spec.name))
        if flag_value is not None and flag_value != ():
            settings[spec.name] = Setting(spec.name, flag_value, "flag")
        elif config and spec.name in config.values:
            settings[spec.name] = Setting(spec.name, config.values[spec.name], config.origin(spec.name))
        else:
            settings[spec.name] = Setting(spec.name, spec.default, "default")
    return settings


def project_config(start: str | os.PathLike | None) -> ProjectConfig | None:
    """The mlir-offload.toml in effect for an input (found by walking up from it), read and checked once."""
    found = find_config(start)
    return load_config(found) if found else None


def default_of(name: str) -> Any:
    """The default of a setting (key or Python name): KEYS is the one table of defaults; a flag that is
    no project setting (--rename) defaults to None, "not given"."""
    spec = KEYS_BY_NAME.get(name.replace("_", "-"))
    return spec.default if spec else None


def fill_unset(kwargs: dict[str, Any], start: str | os.PathLike | None,
               config: ProjectConfig | None | bool = True) -> dict[str, Any]:
    """Return `kwargs` (command parameters, None = not given) with what the project file sets filled in.
    Only names that are both parameters and config keys are touched. `config` as in resolve()."""
    if config is True:
        config = project_config(start)
    if not config:
        return dict(kwargs)
    merged = dict(kwargs)
    for key, value in config.values.items():
        name = attr_name(key)
        if name in merged and (merged[name] is None or merged[name] == ()):
            merged[name] = list(value) if isinstance(value, tuple) else value
    return merged


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
