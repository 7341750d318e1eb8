"""The emulator sanitizer's checks (`--emulate --sanitize[=LIST]`, docs/emulator.md): their names, and the bit
each has in the sanitizer runtime's mask (offload/data/emulator/sanitizer.c, SAN_*)."""

from __future__ import annotations

from collections.abc import Iterable

from offload.errors import OffloadError

SANITIZER_BITS = {"memcheck": 1, "racecheck": 2, "initcheck": 4, "synccheck": 8, "leakcheck": 16}
SANITIZERS = tuple(SANITIZER_BITS)
ALL = "all"
# A bare --sanitize: every check but leakcheck, which is asked for by name (or `all`), as compute-sanitizer's
# --leak-check is: many correct programs leave freeing to the process's exit.
DEFAULT = "default"
DEFAULT_CHECKS = tuple(name for name in SANITIZERS if name != "leakcheck")


def sanitizer_list(value: str | Iterable[str]) -> tuple[str, ...]:
    """ "all", "default", "memcheck,racecheck" or a list of names -> the names, in SANITIZERS order."""
    words = value.split(",") if isinstance(value, str) else list(value)
    names = {word.strip() for word in words}
    if ALL in names:
        return SANITIZERS
    if DEFAULT in names:
        names = (names - {DEFAULT}) | set(DEFAULT_CHECKS)
    unknown = sorted(names - set(SANITIZERS))
    if unknown or not names:
        valid = ", ".join((ALL, DEFAULT, *SANITIZERS))
        raise OffloadError(f"unknown sanitizer check '{', '.join(unknown) or value}' (valid: {valid})")
    return tuple(name for name in SANITIZERS if name in names)


def sanitizer_mask(names: Iterable[str]) -> int:
    return sum(SANITIZER_BITS[name] for name in set(names))
