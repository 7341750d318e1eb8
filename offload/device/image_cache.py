"""A content-addressed cache of device images, so that rebuilding an unchanged program skips the LLVM
stages (link, device libraries, optimizer) of every target, kept in the cache's tiers (offload/cache/).

The key hashes everything an image depends on: the lowered gpu.module IR, the target, the device
options, the bytes of every library that may be linked, and the versions of the tools and of this
package's device code; never a path, so that machines with other folders share images. An entry of
either tier is used only when it records the key asked for and its image checks out (cache_entry.py);
anything else is a miss, and the image is built as without a cache."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from offload import __version__, trace
from offload.cache.root import open_folder, remember_failure, remote_settings, remote_values
from offload.device.cache_entry import decode, encode
from offload.errors import OffloadError


def open_cache(options) -> ImageCache | None:
    """The tiers a compile with `options` uses (None: --no-cache, or neither tier at hand)."""
    if not options.cache:
        return None
    url, mode, ttl = remote_settings(options)
    remote = None
    if url:
        from offload.cache.remote import RemoteCache

        remote = RemoteCache(url, mode, ttl)
    folder = open_folder()
    return ImageCache(folder, remote) if folder or remote else None


class ImageCache:
    """One compile's view of both tiers: `lookup` once before building, `store` once after."""

    def __init__(self, folder, remote=None):
        self.folder = folder  # offload.cache.folder.CacheFolder or None
        self.remote = remote  # offload.cache.remote.RemoteCache or None
        self.counts = {"local_hits": 0, "remote_hits": 0, "misses": 0, "remote_writes": 0}

    def lookup(self, keys: list[str], targets: list, native: bool = False) -> list:
        """The cached DeviceImage of each key (None: a miss): the local folder first, then one round trip
        to the remote tier for all the local misses. A remote hit is kept in the local folder too.
        native: the images come with their native code (cache_entry.decode)."""
        images = [self._local(key, target, native) for key, target in zip(keys, targets, strict=True)]
        for image, target in zip(images, targets, strict=True):
            if image is not None:
                trace.note(f"cache: hit {target.arch}")
        missing = [i for i, image in enumerate(images) if image is None]
        if self.remote is not None and missing:
            values = remote_values(self.folder, self.remote, [keys[i] for i in missing])
            for i, value in zip(missing, values, strict=True):
                image = decode(value, keys[i], targets[i], native) if value is not None else None
                if image is not None:
                    images[i] = image
                    trace.note(f"cache: remote hit {targets[i].arch}")
                    self.counts["remote_hits"] += 1
                    if self.folder is not None:
                        self.folder.write(keys[i], value)
        for image, target in zip(images, targets, strict=True):
            if image is None:
                trace.note(f"cache: miss {target.arch}")
        self.counts["local_hits"] += len(images) - len(missing)
        self.counts["misses"] += sum(image is None for image in images)
        return images

    def _local(self, key: str, target, native: bool):
        if self.folder is None:
            return None
        data = self.folder.read(key)
        return decode(data, key, target, native) if data is not None else None

    def store(self, built: dict[str, object]) -> None:
        """Keep the images built (key -> DeviceImage) in both tiers, then record the compile's counts."""
        entries = {key: encode(key, image) for key, image in built.items()}
        if self.folder is not None:
            for key, data in entries.items():
                self.folder.write(key, data)
        if self.remote is not None:
            already = self.remote.failure
            self.counts["remote_writes"] += self.remote.put_many(entries)
            if already is None and self.folder is not None:
                remember_failure(self.folder, self.remote)  # the server died while the images were built
            self.remote.close()
        if self.folder is not None:
            if entries or self.counts["remote_hits"]:
                self.folder.evict()
            self.folder.add_stats(self.counts)
            self.folder.close()


def image_key(job, library_files: list[str]) -> str:
    """The content address of a SerializeJob's image; library_files: every library it may link."""
    # The options table says which options change an image; the libraries count by their bytes, below.
    options = job.options.cache_key()
    optimizer = job.optimizer
    description = {
        "lowered": [(m.name, m.llvm_ir, m.kernels) for m in job.lowered],
        "target": [job.target.offload_kind, job.target.arch, job.target.triple, job.target.features],
        "options": options,
        "lto_pre_link": job.lto_pre_link,
        # The libraries in link order, by their bytes (the --link-bitcode files first).
        "libraries": [_file_digest(path) for path in library_files],
        # The LLVM that runs the stages (its version included): llvmlite, or opt and llvm-link.
        "tools": {
            "mlir-offload": __version__,
            "device-code": _device_code_digest(),
            "llvm": ["llvmlite" if optimizer.in_process else "llvm-tools", optimizer.version],
        },
    }
    return hashlib.sha256(json.dumps(description, sort_keys=True, default=str).encode()).hexdigest()


def with_codegen(key: str, codegen_key: str) -> str:
    """The key of an image together with its native code (offload.device.native.Codegen.key)."""
    return hashlib.sha256(json.dumps([key, codegen_key]).encode()).hexdigest()


def _file_digest(path: str) -> str:
    from offload.fsutil import read_input

    try:
        return hashlib.sha256(read_input(path)).hexdigest()
    except OffloadError:
        return "unreadable"  # serialization itself reports it


_code_digest: list[str] = []


# The cache's own modules make no image (the entry format has its version in cache_entry.MAGIC).
CACHE_MODULES = ("image_cache.py", "cache_entry.py")


def _device_code_digest() -> str:
    """This package's device-side code: an edited pass or option changes every key."""
    if not _code_digest:
        digest = hashlib.sha256()
        for source in sorted(Path(__file__).parent.glob("*.py")):
            if source.name in CACHE_MODULES:
                continue
            digest.update(source.name.encode() + source.read_bytes())
        _code_digest.append(digest.hexdigest())
    return _code_digest[0]
