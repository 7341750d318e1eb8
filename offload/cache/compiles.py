"""Whole compiles from the cache (as ccache's direct mode): a compile whose program, options, settings,
environment and mlir-offload are those of an earlier one, and whose other inputs are unchanged, writes
that compile's files (the bundle, its dependency file, its PTX files) without loading the MLIR at all.
The entries live in the same tiers as the device images (the local folder, then the remote tier in one
round trip), and are trusted as they are (root.py, docs/cache.md).

The key hashes what a compile can be told before it reads anything: the program's and the named
libraries' and mlir-offload.toml's bytes, the resolved options, the output's and the input's paths and
the current folder (a dependency file names them), the environment variables the compile consults, the
files of this package and the identity of the MLIR bindings and of llvmlite. What the compile then found
by itself (the vendor libraries, LLVM's tools, ptxas) is recorded as it runs (a Python audit hook sees
every file the compiling process opens to read, every program it starts and every tool whose remembered
answer it uses, facts.py) and stored in the entry:
a file by its SHA-256, a program by its size and modification time. An entry is taken only when every
one of them is unchanged; a compile that printed anything (a warning) is not stored, so that it runs,
and warns, again."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from offload import trace
from offload.cache.facts import FACT_EVENT
from offload.cache.folder import COMPILE_SUFFIX
from offload.cache.root import open_folder, remember_failure, remote_settings, remote_values
from offload.cache.sealed import seal, unseal
from offload.errors import pending_warnings
from offload.fsutil import STDIN, STDOUT, current_folder
from offload.interrupts import called_from_native

MAGIC = b"MLIR-OFFLOAD-COMPILE-1\n"
# Options that choose where the cache is, not what a compile writes.
_NOT_IN_KEY = ("cache", "remote_cache", "remote_cache_mode", "remote_cache_ttl")
# The environment a compile consults (tool discovery, the toolkits, mlir-offload's own settings), less the
# settings of the cache itself and of what -v prints.
_ENVIRONMENT_PREFIXES = ("MLIR_OFFLOAD_", "CUDA", "ROCM", "HIP_", "HSA_")
_ENVIRONMENT_NAMES = ("PATH", "LD_LIBRARY_PATH")
_ENVIRONMENT_IGNORED = (
    "MLIR_OFFLOAD_CACHE_DIR",
    "MLIR_OFFLOAD_CACHE_MODE",
    "MLIR_OFFLOAD_REMOTE_CACHE",
    "MLIR_OFFLOAD_REMOTE_CACHE_MODE",
    "MLIR_OFFLOAD_REMOTE_CACHE_TTL",
    "MLIR_OFFLOAD_REMOTE_CACHE_PASSWORD",
    "MLIR_OFFLOAD_VERBOSE",
    "MLIR_OFFLOAD_PROGRESS_AFTER",
    "MLIR_OFFLOAD_TRACEBACK",
)
# Files a compile opens that are code (its modules: this package's in the key, the bindings' by identity).
_CODE_SUFFIXES = (".py", ".pyc", ".so", ".pth")
_PACKAGE = Path(__file__).resolve().parent.parent
# What an entry may ask a compile to check: a few inputs, none huge (an entry is checked before it is used).
MAX_INPUT_BYTES = 1 << 30
MAX_IMPLICIT_INPUTS = 4096


NATIVE_ARCH = "native"  # --offload-arch=native (offload/toolchain/gpus.py): asked anew each compile


def eligible(input_path: str, output: str | None, options, verbose: bool) -> bool:
    """Whether a compile may be taken whole: its outputs are files named on the command line, and it
    writes nothing a replay could not (a trace, ptxas's report, saved stages, a pass pipeline's files)."""
    return bool(
        options.cache
        and output
        and output != STDOUT
        and input_path != STDIN
        and not verbose
        and not trace.enabled()
        and not options.time_trace
        and not options.resource_usage
        and not options.save_temps
        and not options.pass_pipeline
        and not options.device_stage_folder
        and NATIVE_ARCH not in (options.offload_arch or "").split(",")
    )  # this machine's GPUs may change


def compile_key(input_path: str, output: str, textual: bool, options, config_file: str | None) -> str | None:
    """The key of a compile, or None when a named input is not a regular file (read as the compile reads it)
    or the current folder is gone (the dependency file's relative names would have no meaning)."""
    folder = current_folder()
    if folder is None:
        return None
    files = []
    for path in [input_path, *options.link_bitcode, options.libdevice, config_file]:
        if path:
            digest = _content_digest(path)
            if digest is None:
                return None
            files.append([os.path.abspath(path), digest])
    description = {
        "kind": MAGIC.decode().strip(),
        "package": _package_digest(),
        "bindings": _bindings_identity(),
        "python": sys.version,
        "folder": folder,
        "input": os.path.abspath(input_path),
        "output": output,
        "textual": textual,
        "config": config_file,
        "files": files,
        "options": {k: v for k, v in asdict(options).items() if k not in _NOT_IN_KEY},
        "environment": {k: v for k, v in sorted(os.environ.items()) if _consulted(k)},
    }
    return hashlib.sha256(json.dumps(description, sort_keys=True, default=str).encode()).hexdigest()


def _consulted(name: str) -> bool:
    return (name in _ENVIRONMENT_NAMES or name.startswith(_ENVIRONMENT_PREFIXES)) and name not in _ENVIRONMENT_IGNORED


class Recorder:
    """The files the compiling process opens to read and the programs it starts, from a Python audit
    hook (installed once per process; it records only between start and stop)."""

    _active: Recorder | None = None
    _installed = False

    def __init__(self):
        self.files: list[str] = []
        self.programs: list[str] = []

    def start(self) -> None:
        if not Recorder._installed:
            sys.addaudithook(_audit)
            Recorder._installed = True
        Recorder._active = self

    def stop(self) -> None:
        Recorder._active = None

    def implicit_inputs(self, exclude: list[str]) -> list[list] | None:
        """[kind, path, fingerprint] of what was recorded: files by content, programs by size and
        modification time; None when one of them cannot be fingerprinted."""
        excluded = {os.path.realpath(p) for p in exclude}
        found: dict[tuple[str, str], object] = {}
        for path in dict.fromkeys(self.files):
            real = os.path.realpath(path)
            if (
                real in excluded
                or real.endswith(_CODE_SUFFIXES)
                or real.startswith(("/proc/", "/sys/", "/dev/"))
                or Path(real).is_relative_to(_PACKAGE)
                or ("file", real) in found
            ):
                continue
            try:
                if not stat.S_ISREG(os.stat(real).st_mode):
                    continue
            except OSError:
                continue  # a name opened relative to a folder descriptor (the cache's own files), or gone
            digest = _content_digest(real)
            if digest is None:
                return None
            found[("file", real)] = digest
        for program in dict.fromkeys(self.programs):
            identity = _program_identity(program)
            if identity is None:
                return None
            found[("program", program)] = identity
        if len(found) > MAX_IMPLICIT_INPUTS:
            return None
        return [[kind, path, fingerprint] for (kind, path), fingerprint in sorted(found.items())]


@called_from_native
def _audit(event: str, arguments: tuple) -> None:
    recorder = Recorder._active
    if recorder is None:
        return
    try:
        if event == "open":
            path, _, flags = arguments
            if isinstance(path, (str, bytes)) and isinstance(flags, int) and flags & os.O_ACCMODE == os.O_RDONLY:
                recorder.files.append(os.path.abspath(os.fsdecode(path)))
        elif event == "subprocess.Popen":
            executable, command, _, environment = arguments
            program = os.fsdecode(
                executable if executable is not None else (command if isinstance(command, (str, bytes)) else command[0])
            )
            search = (environment or {}).get("PATH") if isinstance(environment, dict) else None
            found = program if os.sep in program else shutil.which(program, path=search)
            recorder.programs.append(os.path.realpath(found) if found else program)
        elif event == FACT_EVENT:  # a tool's remembered answer (facts.py): the compile depends on it as if it ran
            recorder.programs.extend(arguments[0])
    except Exception:  # noqa: BLE001 - a hook that raises would fail the operation it watches
        recorder.files.append("\0unrecordable")


def still_valid(implicit: list) -> bool:
    """Whether every implicit input of an entry is as it was when the entry was stored."""
    for kind, path, fingerprint in implicit:
        current = _content_digest(path) if kind == "file" else _program_identity(path) if kind == "program" else None
        if current is None or current != fingerprint:
            return False
    return True


def _content_digest(path: str) -> str | None:
    """SHA-256 of a regular file's bytes (never a FIFO or a device: opened without blocking, then fstat;
    never one past MAX_INPUT_BYTES)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except (OSError, ValueError):
        return None
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode) or status.st_size > MAX_INPUT_BYTES:
            return None
        digest = hashlib.sha256()
        while chunk := os.read(fd, 1 << 20):
            digest.update(chunk)
        return digest.hexdigest()
    except OSError:
        return None
    finally:
        os.close(fd)


def _program_identity(path: str) -> list[int] | None:
    try:
        status = os.stat(path)
    except (OSError, ValueError):
        return None
    return [status.st_size, status.st_mtime_ns] if stat.S_ISREG(status.st_mode) else None


_package: list[str] = []


def _package_digest() -> str:
    """Every file of this package (its code and its data): any edit changes every key."""
    if not _package:
        digest = hashlib.sha256()
        for path in sorted(_PACKAGE.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(str(path.relative_to(_PACKAGE)).encode() + b"\0" + path.read_bytes())
        _package.append(digest.hexdigest())
    return _package[0]


def _bindings_identity() -> list:
    """The MLIR bindings' and llvmlite's native libraries by size and modification time (found without
    importing them)."""
    from importlib.util import find_spec

    found = []
    for package, folder in (("mlir", "_mlir_libs"), ("llvmlite", "binding")):
        spec = find_spec(package)
        locations = list(spec.submodule_search_locations or []) if spec else []
        for location in locations:
            libraries = Path(location) / folder
            if libraries.is_dir():
                for library in sorted(libraries.iterdir()):
                    if library.name.endswith(".so") or ".so." in library.name:
                        status = library.stat()
                        found.append([str(library), status.st_size, status.st_mtime_ns])
        found.append([package, locations])
    return found


# ---- entries -------------------------------------------------------------------------------------


def encode(key: str, implicit: list, files: dict[str, bytes]) -> bytes:
    header = {"key": key, "implicit": implicit, "outputs": [[path, len(data)] for path, data in files.items()]}
    return seal(MAGIC, header, b"".join(files.values()))


def decode(data: bytes, key: str, allowed) -> tuple[list, dict[str, bytes]] | None:
    """(implicit inputs, path -> bytes) of an entry for `key` whose every output path `allowed(path)`
    accepts; None when it is not one (damaged, another key's, an output this compile would not write)."""
    opened = unseal(data, MAGIC)
    if opened is None or opened[0].get("key") != key:
        return None
    header, body = opened
    implicit, outputs = header.get("implicit"), header.get("outputs")
    if (
        not isinstance(implicit, list)
        or len(implicit) > MAX_IMPLICIT_INPUTS
        or not all(
            isinstance(i, list) and len(i) == 3 and i[0] in ("file", "program") and isinstance(i[1], str)
            for i in implicit
        )
    ):
        return None
    if (
        not isinstance(outputs, list)
        or not outputs
        or not all(
            isinstance(o, list)
            and len(o) == 2
            and isinstance(o[0], str)
            and allowed(o[0])
            and isinstance(o[1], int)
            and not isinstance(o[1], bool)
            and o[1] >= 0
            for o in outputs
        )
    ):
        return None
    if sum(o[1] for o in outputs) != len(body) or len({o[0] for o in outputs}) != len(outputs):
        return None
    files, offset = {}, 0
    for path, length in outputs:
        files[path] = bytes(body[offset : offset + length])
        offset += length
    return implicit, files


# ---- one compile ---------------------------------------------------------------------------------


class CompileCache:
    """One compile's use of the cache as a whole: `lookup` before the work, `store` after it."""

    REMOTE_PREFIX = "mlir-offload:compile:"

    def __init__(self, key: str, options):
        self.key = key
        self.folder = open_folder()
        url, mode, ttl = remote_settings(options)
        self.remote = None
        if url:
            from offload.cache.remote import RemoteCache

            self.remote = RemoteCache(url, mode, ttl)
        self.recorder = Recorder()
        self._stderr: Any = None  # standard error while the compile is watched

    def lookup(self, allowed) -> dict[str, bytes] | None:
        """The files of the earlier compile (path -> bytes), or None: a miss (then the compile runs)."""
        if self.folder is not None:
            files = self._take(self.folder.read(self.key, COMPILE_SUFFIX), allowed)
            if files is not None:
                self._count("compile_hits")
                return files
        if self.remote is not None:
            [value] = remote_values(self.folder, self.remote, [self.key], self.REMOTE_PREFIX)
            files = self._take(value, allowed)
            if files is not None:
                if self.folder is not None:
                    self.folder.write(self.key, value, COMPILE_SUFFIX)
                self._count("compile_remote_hits")
                return files
        return None

    def _take(self, data: bytes | None, allowed) -> dict[str, bytes] | None:
        entry = decode(data, self.key, allowed) if data is not None else None
        if entry is None or not still_valid(entry[0]):
            return None
        return entry[1]

    def _count(self, name: str) -> None:
        if self.folder is not None:
            self.folder.add_stats({name: 1})
        self.close()

    def start(self) -> None:
        """Record the compile's implicit inputs, and whether it prints anything."""
        self.recorder.start()
        self._stderr = sys.stderr
        sys.stderr = _Watched(sys.stderr)

    def store(self, files: dict[str, bytes], exclude: list[str]) -> None:
        """Keep the compile's files, unless it printed something (its warnings would not be repeated)."""
        self.recorder.stop()
        watched, sys.stderr = sys.stderr, self._stderr
        if isinstance(watched, _Watched) and (watched.written or pending_warnings()):
            return self.close()
        implicit = self.recorder.implicit_inputs([*exclude, *files])
        if implicit is not None:
            entry = encode(self.key, implicit, files)
            if self.folder is not None:
                self.folder.write(self.key, entry, COMPILE_SUFFIX)
            if self.remote is not None:
                self.remote.put_many({self.key: entry}, self.REMOTE_PREFIX)
                if self.folder is not None:
                    remember_failure(self.folder, self.remote)
        self.close()

    def abandon(self) -> None:
        self.recorder.stop()
        if isinstance(sys.stderr, _Watched):
            sys.stderr = self._stderr
        self.close()

    def close(self) -> None:
        if self.remote is not None:
            self.remote.close()
            self.remote = None
        if self.folder is not None:
            self.folder.close()
            self.folder = None


class _Watched:
    """Standard error, noting whether anything was written to it."""

    def __init__(self, stream):
        self._stream = stream
        self.written = False

    def write(self, text):
        self.written = self.written or bool(text)
        return self._stream.write(text)

    def __getattr__(self, name):
        return getattr(self._stream, name)
