"""Toolchain facts: what the installed tools say about themselves (`ptxas --version`, clang's `-###` of an
NVPTX link, the data layouts `opt` gives), asked at most once per process and remembered across
processes in one small file of the cache folder (FACTS_NAME), so that a compile, a link or an emulated
run on an unchanged toolchain starts no process to ask them again (docs/cache.md, "Toolchain facts").

A fact is filed under everything its answer depends on: the probe's name and arguments, and the identity
of each tool it runs and of each file the tool reads for it (real path, size, modification time in ns,
inode; a file's absence counts too): a tool replaced, reinstalled or touched is asked again. The file is
untrusted bytes: read through the cache folder's rules (folder.py: the user's own, never through a link,
at most MAX_FACTS_BYTES), parsed as JSON by Python only, and taken only whole and of the exact schema,
each fact again by its probe's own check; anything else counts as absent: the probes run, and the file is
written anew. It is written to a temporary file and renamed (a `make -j`'s compiles: the last writer
wins, never a torn file). No cache folder, one that cannot be trusted or written: the probes run, silently.
`--no-cache` keeps using the facts (they describe installed tools, not outputs); `mlir-offload cache
--clear` removes the file, so that every tool is asked again."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import sys
from collections.abc import Callable, Sequence
from typing import Any

from offload.cache.folder import FACTS_NAME, CacheFolder
from offload.cache.root import cache_root
from offload.errors import OffloadError
from offload.trust import team_mode

SCHEMA = "mlir-offload toolchain facts 1"
MAX_FACTS_BYTES = 1 << 20
MAX_FACTS = 256  # past this the oldest go: each toolchain upgrade adds a handful
MAX_TEXT = 64 << 10  # a tool's answer (`--version`, a data layout) is far shorter
_MAX_ITEMS = 64
_MAX_DEPTH = 4
# The audit event naming the tools whose remembered answers a process used: the whole-compile cache
# (compiles.py) records them as programs the compile depends on, as if it had started them.
FACT_EVENT = "mlir_offload.toolchain_fact"

# What this process asked or read: fact key -> answer.
_known: dict[str, Any] = {}
# The file's facts, read once per process and cache folder.
_stored: dict[str, dict[str, Any]] = {}


def identity(path: str) -> list | None:
    """[real path, size, mtime in ns, inode] of a regular file (a bare name found on PATH), else None."""
    found = path if os.sep in path else shutil.which(path)
    if not found:
        return None
    real = os.path.realpath(found)
    try:
        status = os.stat(real)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(status.st_mode):
        return None
    return [real, status.st_size, status.st_mtime_ns, status.st_ino]


def remembered(
    probe: str,
    tools: Sequence[str],
    ask: Callable[[], Any],
    accept: Callable[[Any], bool],
    arguments: Sequence[str] = (),
    inputs: Sequence[str] = (),
) -> Any:
    """The answer of `ask()` (which runs `tools`): remembered, or asked now and remembered. `accept` says
    whether a stored answer has the probe's shape; `ask()` returning None (the tool could not be run,
    timed out) is passed on and not remembered. A tool that is not a regular file is always asked."""
    tool_identities = [identity(tool) for tool in tools]
    if any(found is None for found in tool_identities):
        return ask()
    description = [
        SCHEMA,
        probe,
        [[tool, found] for tool, found in zip(tools, tool_identities, strict=True)],
        list(arguments),
        [[path, identity(path)] for path in inputs],
    ]
    key = hashlib.sha256(json.dumps(description).encode()).hexdigest()
    reals = tuple(found[0] for found in tool_identities if found)
    if key in _known:
        sys.audit(FACT_EVENT, reals)
        return _known[key]
    stored = _stored_facts().get(key)
    if stored is not None and accept(stored):
        _known[key] = stored
        sys.audit(FACT_EVENT, reals)
        return stored
    answer = ask()
    if answer is not None:
        _known[key] = answer
        if _plain(answer, 0) and accept(answer):
            _store(key, answer)
    return answer


def forget() -> None:
    """Forget what this process asked and read (the file stays; `cache --clear` removes it)."""
    _known.clear()
    _stored.clear()


def _folder(create: bool) -> CacheFolder | None:
    root = cache_root()
    if root is None:
        return None
    try:
        folder = CacheFolder(root, team=team_mode(), warn=lambda message: None)
    except OffloadError:  # a bad MLIR_OFFLOAD_CACHE_MODE: the image cache's error to report, not a probe's
        return None
    return folder if folder.open(create) else None


def _stored_facts() -> dict[str, Any]:
    root = str(cache_root())
    if root not in _stored:
        folder = _folder(create=False)
        _stored[root] = {}
        if folder is not None:
            try:
                _stored[root] = decode(folder.read_record(FACTS_NAME, MAX_FACTS_BYTES))
            finally:
                folder.close()
    return _stored[root]


def _store(key: str, answer: Any) -> None:
    """Add one fact to the file: read it again (another compile's facts stay), add, rename into place."""
    folder = _folder(create=True)
    if folder is None:
        return
    try:
        facts = decode(folder.read_record(FACTS_NAME, MAX_FACTS_BYTES))
        facts.pop(key, None)
        facts[key] = answer
        data = encode(facts)
        while len(data) > MAX_FACTS_BYTES and len(facts) > 1:
            facts = dict(list(facts.items())[len(facts) // 2 :])  # the newer half
            data = encode(facts)
        if len(data) <= MAX_FACTS_BYTES:
            folder.write_record(FACTS_NAME, data)
    finally:
        folder.close()


def encode(facts: dict[str, Any]) -> bytes:
    kept = dict(list(facts.items())[-MAX_FACTS:])
    return json.dumps({"schema": SCHEMA, "facts": kept}, separators=(",", ":")).encode()


def decode(data: bytes | None) -> dict[str, Any]:
    """The facts of a whole file of the exact schema, else none."""
    if not data or len(data) > MAX_FACTS_BYTES:
        return {}
    try:
        document = json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError):
        return {}
    if not isinstance(document, dict) or set(document) != {"schema", "facts"} or document["schema"] != SCHEMA:
        return {}
    facts = document["facts"]
    if not isinstance(facts, dict) or len(facts) > MAX_FACTS:
        return {}
    if not all(_is_key(key) and _plain(value, 0) for key, value in facts.items()):
        return {}
    return facts


def _is_key(key: object) -> bool:
    return isinstance(key, str) and len(key) == 64 and all(c in "0123456789abcdef" for c in key)


def _plain(value: object, depth: int) -> bool:
    """JSON of a probe's answer: text, numbers, flags, short lists and objects, not deeply nested."""
    if value is None or isinstance(value, bool | int):
        return True
    if isinstance(value, str):
        return len(value) <= MAX_TEXT
    if depth >= _MAX_DEPTH:
        return False
    if isinstance(value, list):
        return len(value) <= _MAX_ITEMS and all(_plain(item, depth + 1) for item in value)
    if isinstance(value, dict):
        return len(value) <= _MAX_ITEMS and all(
            isinstance(k, str) and len(k) <= 64 and _plain(v, depth + 1) for k, v in value.items()
        )
    return False
