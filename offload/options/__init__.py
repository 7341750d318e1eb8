"""The options tables: compile's (compile.py) and link's (link.py), both
made with one machinery (spec.py): each option declared once gives its flag, mlir-offload.toml key, API
keyword and default. Compile's names are re-exported here (`from offload.options import CompileOptions`)."""

from __future__ import annotations

from offload.options.compile import (
    API_KEYWORDS,
    COMPILE,
    COMPILE_DEVICE,
    DEFAULT_OPT_LEVEL,
    DEFAULTS,
    DEVICE_IMAGE_FORMATS,
    HOST_FORMATS,
    PREFIX_SCHEME,
    RENAME_SCHEMES,
    SPECS,
    TOML_KEYS,
    ClangStyleCommand,
    CompileOptions,
    Resolved,
    check_rename,
    command_options,
    compile_option,
    given_flags,
    given_keywords,
    resolve,
)
from offload.options.link import SPECS as LINK_SPECS
from offload.options.link import LinkOptions, link_option, resolve_link
from offload.options.spec import SWITCH, Kind, Spec, describe, toml_key

# Every mlir-offload.toml key -> the Specs declaring it: a key of both tables (`sanitize`) sets both, and
# both check it alike (tests/unit/options/test_link_options.py).
TOML_SPECS: dict[str, tuple[Spec, ...]] = {
    toml_key(name): tuple(table[name] for table in (SPECS, LINK_SPECS) if name in table and table[name].toml)
    for name in {**SPECS, **LINK_SPECS}
    if any(name in table and table[name].toml for table in (SPECS, LINK_SPECS))
}

__all__ = [
    "API_KEYWORDS",
    "COMPILE",
    "COMPILE_DEVICE",
    "DEFAULTS",
    "DEFAULT_OPT_LEVEL",
    "DEVICE_IMAGE_FORMATS",
    "HOST_FORMATS",
    "LINK_SPECS",
    "PREFIX_SCHEME",
    "RENAME_SCHEMES",
    "SPECS",
    "SWITCH",
    "TOML_KEYS",
    "TOML_SPECS",
    "ClangStyleCommand",
    "CompileOptions",
    "Kind",
    "LinkOptions",
    "Resolved",
    "Spec",
    "check_rename",
    "command_options",
    "compile_option",
    "describe",
    "given_flags",
    "given_keywords",
    "link_option",
    "resolve",
    "resolve_link",
    "toml_key",
]
