"""A content-addressed cache of device images, so that rebuilding an unchanged program skips the LLVM
stages (link, device libraries, optimizer) of every target.

The key hashes everything an image depends on: the lowered gpu.module IR, the target, the device
options, the bytes of every library that may be linked, and the versions of the tools and of this
package's device code. The cache lives in MLIR_OFFLOAD_CACHE_DIR, else $XDG_CACHE_HOME/mlir-offload,
else ~/.cache/mlir-offload. Entries are written to a temporary file and renamed (safe under make -j),
carry a checksum (a corrupt entry is removed and rebuilt), and the least recently used go once the
folder outgrows its bound."""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

CACHE_ENVIRONMENT = "MLIR_OFFLOAD_CACHE_DIR"
MAGIC = b"MLIR-OFFLOAD-IMAGE-1\n"
DEFAULT_MAX_BYTES = 512 << 20
SUFFIX = ".image"
# Options that choose whether the cache is used, not what goes into an image.
NOT_IN_KEY = ("cache",)


def cache_root() -> Path | None:
    explicit = os.environ.get(CACHE_ENVIRONMENT)
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "mlir-offload"
    home = os.path.expanduser("~")
    return Path(home) / ".cache" / "mlir-offload" if home != "~" else None


class ImageCache:
    def __init__(self, root: Path, max_bytes: int = DEFAULT_MAX_BYTES):
        self.root = Path(root)
        self.max_bytes = max_bytes
        self._warned = False

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}{SUFFIX}"

    def get(self, key: str, target):
        """The cached DeviceImage of `key` for `target`, or None (absent or corrupt: then removed)."""
        from offload.serialize.pipeline import DeviceImage

        path = self.path(key)
        try:
            data = path.read_bytes()
        except OSError:
            return None
        entry = _decode(data)
        if entry is None:
            _remove(path)
            return None
        header, bitcode = entry
        try:
            os.utime(path)  # recently used: evicted last
        except OSError:
            pass
        return DeviceImage(target=target, bitcode=bitcode, kernels=header["kernels"], globals=header["globals"])

    def put(self, key: str, image) -> None:
        header = json.dumps({"kernels": image.kernels, "globals": image.globals}).encode()
        payload = len(header).to_bytes(4, "little") + header + image.bitcode
        data = MAGIC + hashlib.sha256(payload).digest() + payload
        path = self.path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".", suffix=".tmp", dir=path.parent)
            try:
                with os.fdopen(fd, "wb") as out:
                    out.write(data)
                os.replace(tmp, path)
            except BaseException:
                _remove(Path(tmp))
                raise
        except OSError as e:
            self._warn(f"cannot write the device image cache '{self.root}': {e.strerror} (--no-cache skips it)")
            return
        self.evict()

    def evict(self) -> None:
        """Least recently used entries go until the cache holds at most 3/4 of its bound."""
        entries, total = [], 0
        for path in self.root.glob(f"??/*{SUFFIX}"):
            try:
                status = path.stat()
            except OSError:
                continue  # another process evicted it
            entries.append((status.st_mtime, path.name, status.st_size, path))
            total += status.st_size
        if total <= self.max_bytes:
            return
        for _, _, size, path in sorted(entries):
            if total <= self.max_bytes * 3 // 4:
                break
            _remove(path)
            total -= size

    def _warn(self, message: str) -> None:
        if not self._warned:
            print(f"mlir-offload: warning: {message}", file=sys.stderr)
            self._warned = True


def _decode(data: bytes):
    """(header, bitcode) of a well-formed entry, else None."""
    start = len(MAGIC) + 32
    if len(data) < start + 4 or not data.startswith(MAGIC):
        return None
    payload = data[start:]
    if hashlib.sha256(payload).digest() != data[len(MAGIC):start]:
        return None
    size = int.from_bytes(payload[:4], "little")
    try:
        header = json.loads(payload[4:4 + size])
    except ValueError:
        return None
    if not isinstance(header, dict) or not all(isinstance(header.get(k), list) for k in ("kernels", "globals")):
        return None
    return header, payload[4 + size:]


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass


def image_key(job, library_files: list[str]) -> str:
    """The content address of a SerializeJob's image; library_files: every library it may link."""
    from offload import __version__

    options = {k: v for k, v in asdict(job.options).items() if k not in NOT_IN_KEY}
    description = {
        "lowered": [(m.name, m.llvm_ir, m.kernels) for m in job.lowered],
        "target": [job.target.offload_kind, job.target.arch, job.target.triple, job.target.features],
        "options": options,
        "lto_pre_link": job.lto_pre_link,
        "libraries": [(path, _file_digest(path)) for path in library_files],
        # The LLVM that runs the stages (its version included): llvmlite, or opt and llvm-link.
        "tools": {"mlir-offload": __version__, "device-code": _device_code_digest(),
                  "llvm": job.optimizer.describe()},
    }
    return hashlib.sha256(json.dumps(description, sort_keys=True, default=str).encode()).hexdigest()


def _file_digest(path: str) -> str:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return "unreadable"  # serialization itself reports it


_code_digest: list[str] = []


def _device_code_digest() -> str:
    """This package's device-side code: an edited pass or option changes every key."""
    if not _code_digest:
        digest = hashlib.sha256()
        for source in sorted(Path(__file__).parent.glob("*.py")):
            digest.update(source.name.encode() + source.read_bytes())
        _code_digest.append(digest.hexdigest())
    return _code_digest[0]
