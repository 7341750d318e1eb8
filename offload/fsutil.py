"""Output files appear whole or not at all: write a temporary file beside the target, then rename."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from offload.errors import OffloadError


def atomic_write(path: str | os.PathLike, data: bytes, mode: int = 0o644) -> None:
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    except OSError as e:
        raise OffloadError(f"cannot write '{target}': {e.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except OSError as e:
        _unlink_quietly(tmp)
        raise OffloadError(f"cannot write '{target}': {e.strerror}") from None
    except BaseException:
        _unlink_quietly(tmp)
        raise


def read_input(path: str | os.PathLike) -> bytes:
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise OffloadError(f"no such file: '{path}'") from None
    except IsADirectoryError:
        raise OffloadError(f"'{path}' is a directory, not a file") from None
    except OSError as e:
        raise OffloadError(f"cannot read '{path}': {e.strerror}") from None


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
