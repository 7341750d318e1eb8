"""The emulator's build cache: `<folder>/<key>/` holds one built file (the opt plugin retarget.so, loaded
into opt; the runtime object, linked into every emulated executable) and `<name>.sha256`, the digest
recorded when it was built. The device image cache's rule (offload/trust.py, docs/cache.md) decides
whom it trusts: the cache folder and the builds' folder must be the user's (team mode: writable by their
group only), every name inside is opened without following links, only regular files of the user (team
mode: of the folder's group) that no one else can change are read, at most MAX_BUILD_BYTES; and the
bytes must match their recorded digest. An entry is stored whole: its folder is filled under a
temporary name and renamed into place, so a concurrent link sees the file and its digest or neither."""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from pathlib import Path

from offload.fsutil import random_hex
from offload.trust import folder_problem, trusted_entry

DIGEST_SUFFIX = ".sha256"
MAX_BUILD_BYTES = 1 << 28  # the plugin is a few MiB
_MAX_DIGEST_BYTES = 256
_OPEN_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_OPEN_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class BuildCache:
    """The builds' folder `builds` of the cache folder `root` ("": the root itself), opened and checked
    once (`problem` says why it is not used)."""

    def __init__(self, root: Path, builds: str, team: bool):
        self.team = team
        self.folder = root / builds if builds else root
        self.replaceable = False  # the last entry taken was the user's own but damaged: a build replaces it
        self._fd: int | None = None
        self._group: int | None = None
        self.problem = self._open(root, builds)

    def _open(self, root: Path, builds: str) -> str | None:
        mode = 0o2770 if self.team else 0o700
        try:  # the folder the user named may be reached through a link: its owner and mode decide
            os.makedirs(root, mode=mode, exist_ok=True)
            fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as e:
            return f"cannot be opened ({e.strerror})"
        status = os.fstat(fd)
        problem = folder_problem(status, self.team)
        if problem or not builds:
            if problem:
                os.close(fd)
                return f"is in a folder that {problem}" if builds else problem
            self._fd, self._group = fd, status.st_gid
            return None
        try:
            try:
                os.mkdir(builds, mode, dir_fd=fd)
            except FileExistsError:
                pass
            inner = os.open(builds, _OPEN_DIRECTORY, dir_fd=fd)
        except OSError as e:  # a link (ELOOP), a file (ENOTDIR)
            return f"is not a folder ({e.strerror})"
        finally:
            os.close(fd)
        if self.team and os.fstat(inner).st_uid == os.geteuid():
            os.fchmod(inner, 0o2770)  # whatever the umask: the group's links store into it too
        if not trusted_entry(os.fstat(inner), self.team, status.st_gid):
            os.close(inner)
            return "is not yours alone (another user's, or writable by others)"
        self._fd, self._group = inner, status.st_gid
        return None

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def take(self, key: str, name: str) -> tuple[bytes | None, str | None]:
        """(the bytes of the entry, None) when it is trusted and matches its digest; (None, None) when
        there is none; (None, why) when the cache or the entry is not to be trusted."""
        self.replaceable = False
        if self._fd is None:
            return None, self.problem
        try:
            entry = os.open(key, _OPEN_DIRECTORY, dir_fd=self._fd)
        except FileNotFoundError:
            return None, None
        except OSError as e:
            return None, f"holds something other than a folder at '{key}' ({e.strerror})"
        try:
            if not trusted_entry(os.fstat(entry), self.team, self._group):
                return None, f"holds a folder '{key}' that is not yours alone"
            data = self._read(name, entry, MAX_BUILD_BYTES)
            digest = self._read(name + DIGEST_SUFFIX, entry, _MAX_DIGEST_BYTES)
        finally:
            os.close(entry)
        if data is None or digest is None:
            self.replaceable = True
            return None, f"holds a '{key}/{name}' that is not a regular file of yours with its digest"
        if hashlib.sha256(data).hexdigest().encode() != digest.strip():
            self.replaceable = True
            return None, f"holds a '{key}/{name}' that does not match the digest recorded when it was built"
        return data, None

    def _read(self, name: str, folder: int, limit: int) -> bytes | None:
        try:
            fd = os.open(name, _OPEN_FILE, dir_fd=folder)
        except OSError:
            return None
        try:
            status = os.fstat(fd)
            if not stat.S_ISREG(status.st_mode) or status.st_size > limit:
                return None
            if not trusted_entry(status, self.team, self._group):
                return None
            chunks, left = [], status.st_size + 1  # one byte more: a file that grew is not what fstat saw
            while left > 0 and (chunk := os.read(fd, min(left, 1 << 24))):
                chunks.append(chunk)
                left -= len(chunk)
            data = b"".join(chunks)
            return data if len(data) == status.st_size else None
        except OSError:
            return None
        finally:
            os.close(fd)

    def store(self, key: str, name: str, data: bytes) -> str | None:
        """Store `data` and its digest as the entry `key` (a damaged entry of the user's is replaced);
        None, or why it could not be stored. A concurrent link that stored the entry first wins."""
        if self._fd is None:
            return self.problem
        mode = 0o660 if self.team else 0o600
        temporary = f".{key}.{random_hex(6)}.tmp"
        try:
            os.mkdir(temporary, 0o2770 if self.team else 0o700, dir_fd=self._fd)
            fd = os.open(temporary, _OPEN_DIRECTORY, dir_fd=self._fd)
            try:
                if self.team:
                    os.fchmod(fd, 0o2770)
                for file_name, content in ((name, data), (name + DIGEST_SUFFIX, hashlib.sha256(data).hexdigest())):
                    out = os.open(file_name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode, dir_fd=fd)
                    os.fchmod(out, mode)
                    with os.fdopen(out, "wb") as f:
                        f.write(content if isinstance(content, bytes) else content.encode())
            finally:
                os.close(fd)
            if self.replaceable:
                self._remove_aside(key)
            try:
                os.rename(temporary, key, src_dir_fd=self._fd, dst_dir_fd=self._fd)
            except OSError as e:
                if e.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                    raise
            return None
        except OSError as e:
            return e.strerror or str(e)
        finally:
            self._remove(temporary)

    def _remove_aside(self, key: str) -> None:
        """Move a damaged entry out of the way (renamed first: a concurrent link never sees it half removed)."""
        aside = f".{key}.{random_hex(6)}.old"
        try:
            os.rename(key, aside, src_dir_fd=self._fd, dst_dir_fd=self._fd)
        except OSError:
            return
        self._remove(aside)

    def _remove(self, name: str) -> None:
        """Remove the folder `name` and the files in it, never following a link."""
        assert self._fd is not None
        try:
            fd = os.open(name, _OPEN_DIRECTORY, dir_fd=self._fd)
        except OSError:
            return
        try:
            for entry in os.scandir(fd):
                try:
                    os.unlink(entry.name, dir_fd=fd)
                except OSError:
                    pass
        finally:
            os.close(fd)
        try:
            os.rmdir(name, dir_fd=self._fd)
        except OSError:
            pass
