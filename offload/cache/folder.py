"""The local tier of the device image cache: a folder of entries (cache_entry.py), one shard folder per
first two hex digits of the key, that no other user can put device code into.

- The folder must be the user's own and writable by no one else, or, in team mode
  (MLIR_OFFLOAD_CACHE_MODE=team), writable by its group and by no one else: a folder others can write
  into is not used, with one warning line naming the fix. Entries and shard folders are taken only from
  their owner (team mode: also from the folder's group) and only when no one else can change them.
- Every name inside is opened relative to the folder's descriptor without following links (O_NOFOLLOW):
  a link in place of a shard folder or of an entry is a miss and is never written through, so nothing
  is ever written outside the folder. Only regular files are read (O_NONBLOCK, then fstat: a FIFO or a
  device is a miss and cannot hang the read), and never more than MAX_ENTRY_BYTES.
- Entries are written to a temporary file in their shard folder and renamed (safe under make -j); the
  least recently used go once the folder outgrows its bound.
- Hit and miss counts live in a small file (STATS_NAME), updated under a lock and renamed into place.
- A remote server that failed is remembered for REMOTE_DOWN_SECONDS in another (REMOTE_DOWN_NAME), so
  that the compiles of a `make -j` do not each wait for its timeout.
- The toolchain facts (facts.py) are one more small file (FACTS_NAME), read and written as records."""

from __future__ import annotations

import errno
import fcntl
import json
import os
import stat
import time
from contextlib import contextmanager
from pathlib import Path

from offload.errors import warn_when_done
from offload.fsutil import random_hex
from offload.trust import folder_problem, trusted_entry

SUFFIX = ".image"
COMPILE_SUFFIX = ".compile"  # a whole compile's files (compiles.py)
SUFFIXES = (SUFFIX, COMPILE_SUFFIX)
STATS_NAME = "stats.json"
_STATS_LOCK = "stats.lock"
DEFAULT_MAX_BYTES = 512 << 20
# An image of a large program is megabytes; an entry past this is not one of ours.
MAX_ENTRY_BYTES = 1 << 30
_MAX_STATS_BYTES = 1 << 16
STAT_NAMES = ("local_hits", "remote_hits", "misses", "remote_writes", "compile_hits", "compile_remote_hits")
REMOTE_DOWN_NAME = "remote-down.json"
REMOTE_DOWN_SECONDS = 60
FACTS_NAME = "toolchain-facts.json"  # what the installed tools said of themselves (facts.py)

_OPEN_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_OPEN_ENTRY = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class CacheFolder:
    """The entries of one cache folder. `open()` checks the folder; every other call is then safe to
    make whatever another process or user did to the folder's contents meanwhile."""

    def __init__(self, root: Path, team: bool = False, max_bytes: int = DEFAULT_MAX_BYTES, warn=None):
        self.root = Path(root)
        self.team = team
        self.max_bytes = max_bytes
        self._print = warn or _print_warning
        self._warned = False
        self._fd: int | None = None
        self._group: int | None = None

    # ---- the folder ----------------------------------------------------------------------------

    def open(self, create: bool = True) -> bool:
        """Open the folder (made, private, if missing and `create`); False, after one warning line, when
        it cannot be used: not a folder, or writable by others than its owner (team mode: its group)."""
        if self._fd is not None:
            return True
        if create:
            try:
                os.makedirs(self.root, mode=0o2770 if self.team else 0o700, exist_ok=True)
            except OSError as e:
                self._warn(
                    f"cannot create the device image cache '{self.root}': {e.strerror}; "
                    "the images are built without it (--no-cache skips it)"
                )
                return False
        try:  # the folder the user named may be reached through a link: its owner and mode decide
            fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as e:
            if e.errno != errno.ENOENT or create:
                self._warn(
                    f"cannot open the device image cache '{self.root}': {e.strerror}; the images are built without it"
                )
            return False
        status = os.fstat(fd)
        problem = self._untrusted_folder(status)
        if problem:
            os.close(fd)
            self._warn(
                f"the device image cache '{self.root}' {problem}: not used; set MLIR_OFFLOAD_CACHE_DIR "
                "to a folder of your own (mode 700), or, for a team's shared cache, make it writable by "
                "one group only and set MLIR_OFFLOAD_CACHE_MODE=team (docs/cache.md)"
            )
            return False
        self._fd, self._group = fd, status.st_gid
        return True

    def _warn(self, message: str) -> None:
        """One warning line per compile: the first problem says what to do; the rest would repeat it."""
        if not self._warned:
            self._warned = True
            self._print(message)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def _untrusted_folder(self, status: os.stat_result) -> str | None:
        return folder_problem(status, self.team)

    def _trusted(self, status: os.stat_result) -> bool:
        """An entry or shard folder no one but the user (team mode: the folder's group) made or can change."""
        return trusted_entry(status, self.team, self._group)

    # ---- entries -------------------------------------------------------------------------------

    def read(self, key: str, suffix: str = SUFFIX) -> bytes | None:
        """The bytes stored under `key`, or None: absent, not a regular file, a link, another user's,
        or larger than MAX_ENTRY_BYTES. A hit counts as recently used (evicted last)."""
        if self._fd is None:
            return None
        shard = self._shard(key, create=False)
        if shard is None:
            return None
        try:
            return self._read_file(f"{key}{suffix}", shard, MAX_ENTRY_BYTES, touch=True)
        finally:
            os.close(shard)

    def write(self, key: str, data: bytes, suffix: str = SUFFIX) -> bool:
        """Store `data` under `key` (temporary file + rename inside the shard folder); False, after one
        warning line, when it cannot be written."""
        if self._fd is None:
            return False
        try:
            shard = self._shard(key, create=True)
        except OSError as e:
            self._warn(f"cannot write the device image cache '{self.root}': {e.strerror} (--no-cache skips it)")
            return False
        if shard is None:
            self._warn(
                f"the device image cache '{self.root}' has something other than a folder of yours at "
                f"'{key[:2]}': its images are not stored ('mlir-offload cache --clear' empties the cache)"
            )
            return False
        try:
            _replace(shard, f"{key}{suffix}", data, 0o660 if self.team else 0o600)
            return True
        except OSError as e:
            self._warn(f"cannot write the device image cache '{self.root}': {e.strerror} (--no-cache skips it)")
            return False
        finally:
            os.close(shard)

    def _shard(self, key: str, create: bool) -> int | None:
        """A descriptor of the key's shard folder (never a link followed), or None when it is missing or
        not a trusted folder."""
        name = key[:2]
        try:
            fd = os.open(name, _OPEN_DIRECTORY, dir_fd=self._fd)
        except FileNotFoundError:
            if not create:
                return None
            try:
                os.mkdir(name, 0o2770 if self.team else 0o700, dir_fd=self._fd)
            except FileExistsError:
                pass  # another compile made it meanwhile
            try:
                fd = os.open(name, _OPEN_DIRECTORY, dir_fd=self._fd)
            except OSError:
                return None
            if self.team:
                try:
                    os.fchmod(fd, 0o2770)  # whatever the umask: the group's compiles write into it too
                except OSError:
                    pass  # another member made it meanwhile
        except OSError:  # a link (ELOOP), a file (ENOTDIR), no permission
            return None
        if not self._trusted(os.fstat(fd)):
            os.close(fd)
            return None
        return fd

    def _read_file(self, name: str, folder: int, limit: int, touch: bool = False) -> bytes | None:
        try:
            fd = os.open(name, _OPEN_ENTRY, dir_fd=folder)
        except OSError:
            return None
        try:
            status = os.fstat(fd)
            if not stat.S_ISREG(status.st_mode) or status.st_size > limit or not self._trusted(status):
                return None
            chunks, left = [], status.st_size + 1  # one byte more: a file that grew is not what fstat saw
            while left > 0:
                chunk = os.read(fd, min(left, 1 << 24))
                if not chunk:
                    break
                chunks.append(chunk)
                left -= len(chunk)
            data = b"".join(chunks)
            if len(data) != status.st_size:
                return None
            if touch:
                try:
                    os.utime(fd)
                except OSError:
                    pass
            return data
        except OSError:
            return None
        finally:
            os.close(fd)

    # ---- listing, eviction, clearing -------------------------------------------------------------

    def entries(self):
        """(shard name, entry name, size, last use) of every regular entry file (links and others skipped)."""
        if self._fd is None:
            return
        for shard in os.scandir(self._fd):
            if len(shard.name) != 2 or not shard.is_dir(follow_symlinks=False):
                continue
            try:
                fd = os.open(shard.name, _OPEN_DIRECTORY, dir_fd=self._fd)
            except OSError:
                continue
            try:
                for entry in os.scandir(fd):
                    if entry.name.endswith(SUFFIXES) and entry.is_file(follow_symlinks=False):
                        try:
                            status = entry.stat(follow_symlinks=False)
                        except OSError:
                            continue  # another process evicted it
                        yield shard.name, entry.name, status.st_size, status.st_mtime
            finally:
                os.close(fd)

    def evict(self) -> None:
        """Least recently used entries go until the folder holds at most 3/4 of its bound."""
        found = list(self.entries())
        total = sum(size for _, _, size, _ in found)
        if total <= self.max_bytes:
            return
        for shard, name, size, _ in sorted(found, key=lambda e: (e[3], e[1])):
            if total <= self.max_bytes * 3 // 4:
                break
            self._unlink(shard, name)
            total -= size

    def clear(self) -> int:
        """Remove every entry and shard folder (links removed, never followed); the stats stay, as with
        ccache -C. Returns the number of entries removed. A remote server's failure and the toolchain
        facts are forgotten too (every tool is asked again)."""
        if self._fd is None:
            return 0
        self.forget_remote_down()
        _unlink_quietly(FACTS_NAME, self._fd)
        removed = 0
        for shard in os.scandir(self._fd):
            if len(shard.name) != 2:
                continue
            if not shard.is_dir(follow_symlinks=False):
                _unlink_quietly(shard.name, self._fd)
                continue
            try:
                fd = os.open(shard.name, _OPEN_DIRECTORY, dir_fd=self._fd)
            except OSError:
                continue
            try:
                for entry in os.scandir(fd):
                    if not entry.is_dir(follow_symlinks=False) and _unlink_quietly(entry.name, fd):
                        removed += entry.name.endswith(SUFFIXES)
            finally:
                os.close(fd)
            try:
                os.rmdir(shard.name, dir_fd=self._fd)
            except OSError:
                pass  # something of another kind inside: left for the user
        return removed

    def _unlink(self, shard: str, name: str) -> None:
        try:
            fd = os.open(shard, _OPEN_DIRECTORY, dir_fd=self._fd)
        except OSError:
            return
        try:
            _unlink_quietly(name, fd)
        finally:
            os.close(fd)

    # ---- statistics ----------------------------------------------------------------------------

    def stats(self) -> dict[str, int]:
        if self._fd is None:
            return dict.fromkeys(STAT_NAMES, 0)
        return self._read_stats()

    def add_stats(self, counts: dict[str, int]) -> None:
        """Add `counts` to the stats file, under its lock (concurrent compiles of make -j lose nothing)."""
        if self._fd is None or not any(counts.values()):
            return
        try:
            with self._stats_lock():
                current = self._read_stats()
                for name, value in counts.items():
                    current[name] = current.get(name, 0) + value
                _replace(
                    self._fd, STATS_NAME, json.dumps(current, sort_keys=True).encode(), 0o660 if self.team else 0o600
                )
        except OSError:
            pass  # the counts are advisory: a compile never fails over them

    def zero_stats(self) -> None:
        if self._fd is None:
            return
        with self._stats_lock():
            _replace(
                self._fd, STATS_NAME, json.dumps(dict.fromkeys(STAT_NAMES, 0)).encode(), 0o660 if self.team else 0o600
            )

    def _read_stats(self) -> dict[str, int]:
        counts = dict.fromkeys(STAT_NAMES, 0)
        if self._fd is None:
            return counts
        data = self._read_file(STATS_NAME, self._fd, _MAX_STATS_BYTES)
        try:
            stored = json.loads(data) if data else {}
        except (ValueError, UnicodeDecodeError):
            stored = {}
        if isinstance(stored, dict):
            counts.update({k: v for k, v in stored.items() if k in counts and isinstance(v, int) and v >= 0})
        return counts

    # ---- a remote server that failed -------------------------------------------------------------

    def remote_down(self, server: str) -> tuple[float, str] | None:
        """(seconds ago, why) when the server `server` (RemoteCache.server_id) failed less than
        REMOTE_DOWN_SECONDS ago, by the record of a compile of this user (team mode: of the group); else None."""
        if self._fd is None:
            return None
        data = self._read_file(REMOTE_DOWN_NAME, self._fd, _MAX_STATS_BYTES)
        try:
            record = json.loads(data) if data else None
        except (ValueError, UnicodeDecodeError):
            record = None
        if not isinstance(record, dict) or record.get("server") != server:
            return None
        since, why = record.get("since"), record.get("why")
        if not isinstance(since, (int, float)) or isinstance(since, bool) or not isinstance(why, str):
            return None
        age = time.time() - since
        # A record from the future (a clock set back, a forgery) counts as old: it never lasts longer.
        return (age, " ".join(why.split())[:1000]) if 0 <= age < REMOTE_DOWN_SECONDS else None

    def mark_remote_down(self, server: str, why: str) -> None:
        """Record that the server failed now (renamed into place: concurrent compiles see one record whole)."""
        if self._fd is None:
            return
        record = {"server": server, "since": time.time(), "why": why[:1000]}
        try:
            _replace(self._fd, REMOTE_DOWN_NAME, json.dumps(record).encode(), 0o660 if self.team else 0o600)
        except OSError:
            pass  # a hint: without it the next compile asks the server again

    # ---- small records at the folder's top (the toolchain facts) ----------------------------------

    def read_record(self, name: str, limit: int) -> bytes | None:
        """The bytes of the record `name`, or None: absent, a link, not a regular file, another user's, or
        larger than `limit`."""
        return self._read_file(name, self._fd, limit) if self._fd is not None else None

    def write_record(self, name: str, data: bytes) -> bool:
        """Rename a new file with `data` over the record `name`; False when it cannot be written."""
        if self._fd is None:
            return False
        try:
            _replace(self._fd, name, data, 0o660 if self.team else 0o600)
            return True
        except OSError:
            return False

    def forget_remote_down(self) -> None:
        if self._fd is not None:
            _unlink_quietly(REMOTE_DOWN_NAME, self._fd)

    @contextmanager
    def _stats_lock(self):
        fd = os.open(
            _STATS_LOCK,
            os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
            0o660 if self.team else 0o600,
            dir_fd=self._fd,
        )
        try:
            status = os.fstat(fd)
            if not stat.S_ISREG(status.st_mode):
                raise OSError(errno.EINVAL, "the stats lock is not a regular file")
            if self.team and status.st_uid == os.geteuid():
                os.fchmod(fd, 0o660)  # the group's compiles lock it too
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)


def _replace(folder: int, name: str, data: bytes, mode: int) -> None:
    """Write `data` to a new temporary file in `folder`, then rename it over `name` (the rename replaces
    whatever `name` was, a link included, without following it)."""
    temporary = f".{name}.{random_hex(6)}.tmp"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=folder)
    try:
        os.fchmod(fd, mode)  # whatever the umask: a team's entries are its group's to read
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.rename(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        _unlink_quietly(temporary, folder)
        raise


def _unlink_quietly(name: str, folder: int) -> bool:
    try:
        os.unlink(name, dir_fd=folder)
        return True
    except OSError:
        return False


def _print_warning(message: str) -> None:
    warn_when_done(f"mlir-offload: warning: {message}")
