"""The machinery of the options tables (offload/options/compile.py, link.py): how one declaration, a field
of a frozen record with its `Spec`, gives the flag, the mlir-offload.toml key, the API keyword and the
default, and how a value of each is checked (`Kind`) and resolved (flag or keyword > file > default).

`kind` says how a value is spelled and checked: SWITCH (bool), Level(lo, hi) (int range), Choice(...),
TEXT, PATH (relative to the TOML file's folder), PATHS/ARCHS (repeatable; a string or an array in
TOML), CLANG_MAJOR, HOST_TRIPLE. A new kind is a `Kind` instance with its checks.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Protocol

import click

from offload.errors import FLAGS, KEY, Mention, OffloadError
from offload.formats.sanitizers import ALL as ALL_SANITIZERS
from offload.formats.sanitizers import DEFAULT as DEFAULT_SANITIZERS
from offload.formats.sanitizers import SANITIZERS, sanitizer_list

# ---- kinds: how a value is spelled on the command line, in mlir-offload.toml and in Python ----------


@dataclass(frozen=True)
class Kind:
    """check(value) -> the typed value, or TypeError(what it expects): for TOML and API values.
    from_flag(value) -> the typed value of a click-parsed flag (None or () = not given).
    click: the keyword arguments of click.option."""

    check: Callable[[Any], Any]
    click: Callable[[], dict] = lambda: {}
    from_flag: Callable[[Any], Any] = lambda value: value
    is_path: bool = False  # relative paths in the TOML file are relative to its folder
    repeatable: bool = False
    # clang's -flag[=VALUE] options: the value the flag alone means (click reads `-flag` as `-flag=BARE`).
    bare: str | None = None


def _bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError("true or false")
    return value


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError("a string")
    return value


def _paths(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise TypeError("a list of file paths")


def _archs(value: Any) -> str:
    # "sm_80,gfx90a" or ["sm_80", "gfx90a"]: kept as the flag's comma-separated spelling.
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, str) and v.strip() for v in value):
        return ",".join(value)
    raise TypeError('an architecture list such as "sm_80,sm_90" or ["sm_80", "gfx90a"]')


def _clang_major(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise TypeError("a clang major version (an integer such as 22)")
    return value


def _clang_major_flag(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        return _clang_major(int(text))
    except (TypeError, ValueError):
        raise OffloadError(f"--target-clang expects a clang major version, got '{text}'") from None


def _host_triple(value: Any) -> str:
    from offload.formats.hosts import host_triple, supported

    try:
        return host_triple(_text(value)).name
    except OffloadError:
        raise TypeError(f"a supported host triple ({supported()})") from None


def _host_triple_flag(text: str | None) -> str | None:
    from offload.formats.hosts import host_triple

    return None if text is None else host_triple(text).name  # its own error names the supported ones


def _sanitize_list(value: Any) -> str | tuple[str, ...]:
    if not isinstance(value, (str, list, tuple)) or not all(isinstance(v, str) for v in value):
        raise TypeError(f'"{ALL_SANITIZERS}", "{DEFAULT_SANITIZERS}" or a list of {", ".join(SANITIZERS)}')
    try:
        sanitizer_list(value)
    except OffloadError:
        raise TypeError(
            f'"{ALL_SANITIZERS}", "{DEFAULT_SANITIZERS}" or a comma-separated list of {", ".join(SANITIZERS)}'
        ) from None
    return value if isinstance(value, str) else tuple(value)


def _redis_url(value: Any) -> str:
    if not isinstance(value, str) or not value.startswith(("redis://", "rediss://")):
        raise TypeError('a Redis URL such as "redis://HOST:6379/0" or "rediss://HOST:6380/0"')
    return value


def _seconds(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise TypeError("a number of seconds (0: no expiry)")
    return value


def Level(low: int, high: int) -> Kind:  # capitalised: it reads as a type in the table
    def check(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise TypeError(f"an integer from {low} to {high}")
        return value

    return Kind(check, lambda: {"type": click.IntRange(low, high)})


def Choice(*choices: str) -> Kind:
    def check(value: Any) -> str:
        if value not in choices:
            raise TypeError("one of " + ", ".join(f'"{c}"' for c in choices))
        return value

    return Kind(check, lambda: {"type": click.Choice(choices)})


def OptionalValue(bare: str, *choices: str) -> Kind:
    """A clang-style `-flag` / `-flag=VALUE` option (-save-temps[=obj], -ftime-trace[=FILE]): `bare` is
    the value of the flag alone; `choices` (if any) the values it takes."""

    def check(value: Any) -> str:
        text = _text(value)
        if choices and text not in choices:
            raise TypeError(f"one of {', '.join(choices)}")
        return text

    return Kind(check, lambda: {"type": click.Choice(choices)} if choices else {}, bare=bare)


SWITCH = Kind(_bool)
TEXT = Kind(_text)
PATH = Kind(_text, lambda: {"type": click.Path()}, is_path=True)
FILE = Kind(_text, lambda: {"type": click.Path()}, is_path=True)  # a folder: the command's own error (exit 1)
PATHS = Kind(_paths, lambda: {"type": click.Path()}, lambda v: tuple(v) or None, True, True)
ARCHS = Kind(_archs, from_flag=lambda v: ",".join(v) if v else None, repeatable=True)
WORDS = Kind(_paths, from_flag=lambda v: tuple(v) or None, repeatable=True)
CLANG_MAJOR = Kind(_clang_major, from_flag=_clang_major_flag)
HOST_TRIPLE = Kind(_host_triple, from_flag=_host_triple_flag)
REDIS_URL = Kind(_redis_url)
SECONDS = Kind(_seconds, lambda: {"type": click.IntRange(min=0)})
SANITIZE_LIST = Kind(_sanitize_list, bare=DEFAULT_SANITIZERS)


@dataclass(frozen=True)
class Spec:
    """One option's declaration (the metadata of its field in a table's record)."""

    kind: Kind
    flags: tuple[str, ...]  # click declarations: "-O", "--opt-level", "--cache/--no-cache"
    help: str
    commands: tuple[str, ...] = ()  # the commands that take the flag; `config show` takes every TOML key
    toml: bool = False  # a key of mlir-offload.toml (named as the field, with '-')
    api: bool = False  # a keyword of offload/api.py (compile_* for compile's, link for link's)
    cache_key: bool = False  # changes what a device image holds
    metavar: str | None = None
    secret: bool = False  # may hold a password: no output or error message shows it


def option(
    default: Any,
    flags: str | tuple[str, ...],
    help: str,
    *,
    kind: Kind = SWITCH,
    commands: tuple[str, ...] = (),
    toml: bool = False,
    api: bool = False,
    cache_key: bool = False,
    metavar: str | None = None,
    secret: bool = False,
) -> Any:
    """A table's field: its default and its Spec."""
    spec = Spec(
        kind, (flags,) if isinstance(flags, str) else flags, help, commands, toml, api, cache_key, metavar, secret
    )
    return field(default=default, metadata={"spec": spec})


# ---- the table --------------------------------------------------------------------------------------


def specs_of(record: type) -> dict[str, Spec]:
    """A table's options (its record's fields) -> their Specs, in declaration order."""
    return {f.name: f.metadata["spec"] for f in fields(record)}


def defaults_of(record: type) -> dict[str, Any]:
    return {f.name: f.default for f in fields(record)}


def toml_key(name: str) -> str:
    return name.replace("_", "-")


def mention(specs: Mapping[str, Spec], name: str, value: str | bool | None = None, joined: bool = False) -> Mention:
    """Option `name` of a table as a message names it (with `value`, if given): the front end words it."""
    if name not in specs:
        raise KeyError(f"no option {name} in this table")
    return Mention(name, value, joined)


def spell_flags(specs: Mapping[str, Spec]) -> None:
    """A table's flags made known to offload.errors (FLAGS), which words a Mention by its key: "-O",
    ("--cache", "--no-cache"); an option without a flag is spelled --its-key."""
    for name, spec in specs.items():
        FLAGS[name] = tuple(spec.flags[0].split("/")) if spec.flags else (f"--{toml_key(name)}",)


def check_fields(record: Any) -> None:
    """A record's values checked by their kinds (a list made a tuple: frozen means a tuple); the first bad
    one is an error naming the option."""
    for spec_field in fields(record):
        value = getattr(record, spec_field.name)
        if isinstance(value, list):
            object.__setattr__(record, spec_field.name, value := tuple(value))
        if value is not None and value != spec_field.default:
            spec = spec_field.metadata["spec"]
            try:
                spec.kind.check(value)
            except TypeError as e:
                got = describe(value, spec.secret)
                raise OffloadError(f"option {spec_field.name} expects {e.args[0]}, got {got}") from None


def describe(value: Any, secret: bool = False) -> str:
    """A value as an error message names it: 'integer 7', 'string "fast"' (a secret string unshown)."""
    if secret and isinstance(value, str):
        return "another string (not shown: it may hold a password)"
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, int):
        return f"integer {value}"
    if isinstance(value, float):
        return f"float {value}"
    if isinstance(value, str):
        return f'string "{value}"'
    if isinstance(value, (list, tuple)):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    return type(value).__name__


def given_keywords(specs: Mapping[str, Spec], keywords: Mapping[str, Any], caller: str) -> dict[str, Any]:
    """The API keywords given (None = not given), checked by their kinds; an unknown one is a TypeError
    as Python raises it."""
    given = {}
    for name, value in keywords.items():
        if name not in specs or not specs[name].api:
            raise TypeError(f"{caller}() got an unexpected keyword argument '{name}'")
        if value is None:
            continue
        if isinstance(value, os.PathLike):  # a path in Python's own types, as every path argument takes
            value = os.fspath(value)
        elif isinstance(value, (list, tuple)):
            value = [os.fspath(item) if isinstance(item, os.PathLike) else item for item in value]
        try:
            given[name] = specs[name].kind.check(value)
        except TypeError as e:
            got = describe(value, specs[name].secret)
            raise OffloadError(f"{caller}(): {name} expects {e.args[0]}, got {got}") from None
    return given


def given_flags(specs: Mapping[str, Spec], parameters: Mapping[str, Any]) -> dict[str, Any]:
    """The options of a table a command was given (click parameters; None or () = not given), typed."""
    given = {}
    for name, spec in specs.items():
        value = parameters.get(name)
        if value is None or value == ():
            continue
        value = spec.kind.from_flag(value)
        if value is not None:
            given[name] = value
    return given


def check_toml_value(spec: Spec, value: Any, folder: str) -> Any:
    """A TOML value of option `spec` checked (TypeError: what it expects) and, for a path, made absolute
    against the file's `folder`."""
    kind = spec.kind
    value = kind.check(value)
    if kind.is_path:
        if isinstance(value, tuple):
            return tuple(v if os.path.isabs(v) else str(Path(folder) / v) for v in value)
        return value if os.path.isabs(value) else str(Path(folder) / value)
    return value


# ---- the cascade: flag (or API keyword) > mlir-offload.toml > default ------------------------------


class TomlValues(Protocol):
    """A read mlir-offload.toml as the cascade reads it (offload.config.ProjectConfig)."""

    @property
    def path(self) -> Path: ...  # the file

    @property
    def values(self) -> dict[str, Any]: ...  # key -> checked value

    def origin(self, key: str) -> str: ...


def cascade(
    specs: Mapping[str, Spec], defaults: Mapping[str, Any], given: Mapping[str, Any], config: TomlValues | None
) -> tuple[dict[str, Any], dict[str, str]]:
    """Each option's value and where it came from ("flag", "<file>:<line>" or "default"): `given` (typed
    values of flags or keywords) > `config` (for the table's TOML keys) > the default."""
    values, origins = {}, {}
    for name, spec in specs.items():
        key = toml_key(name)
        if name in given:
            values[name], origins[name] = given[name], "flag"
        elif config is not None and spec.toml and key in config.values:
            values[name], origins[name] = config.values[key], config.origin(key)
        else:
            values[name], origins[name] = defaults[name], "default"
    return values, origins


def from_file(error: OffloadError, origins: Mapping[str, str]) -> OffloadError:
    """`error` with each option it names whose value came from mlir-offload.toml (`origins`, the cascade's)
    named as the file's key, with the file and line; the front end words the others (Mention.worded)."""
    parts = []
    for part in error.parts:
        origin = origins.get(part.keyword, "flag") if isinstance(part, Mention) else "flag"
        parts.append(
            f"{part.worded(KEY)} ({origin})"
            if isinstance(part, Mention) and origin not in ("flag", "default")
            else part
        )
    return OffloadError(tuple(parts), error.location)
