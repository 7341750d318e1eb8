"""Output files appear whole or not at all: write a temporary file beside the target, then rename."""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from pathlib import Path

from offload.errors import OffloadError


STDOUT = "-"  # `-o -`: the output goes to standard output, as with clang and the LLVM tools


def atomic_write(path: str | os.PathLike, data: bytes, mode: int = 0o644) -> None:
    if str(path) == STDOUT:
        write_stdout(data)
        return
    write_all({path: data}, mode)


def write_all(outputs: dict, mode: int = 0o644) -> None:
    """Write every path -> bytes of `outputs` all or nothing: each goes to a temporary file beside it, and
    only when all are written are they renamed into place (a rename that fails removes the renamed ones).
    Modes honour the umask; an output that exists and is not a regular file (a device, a FIFO, a folder)
    is refused before anything is written."""
    for path in outputs:
        check_output(path)
    mode &= ~_umask()
    written: list[tuple[str, Path]] = []
    try:
        for path, data in outputs.items():
            target = Path(path)
            directory = target.parent if str(target.parent) else Path(".")
            try:
                fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
            except OSError as e:
                raise OffloadError(f"cannot write '{target}': {e.strerror}") from None
            written.append((tmp, target))
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                os.chmod(tmp, mode)
            except OSError as e:
                raise OffloadError(f"cannot write '{target}': {e.strerror}") from None
        renamed: list[Path] = []
        for tmp, target in written:
            try:
                os.replace(tmp, target)
            except OSError as e:
                for done in renamed:
                    _unlink_quietly(str(done))
                raise OffloadError(f"cannot write '{target}': {e.strerror}") from None
            renamed.append(target)
        written = []
    finally:
        for tmp, _ in written:
            _unlink_quietly(tmp)


def check_output(path: str | os.PathLike) -> None:
    """An output may replace a regular file or nothing: never a device node, a FIFO or a folder."""
    if str(path) == STDOUT:
        return
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return
    except OSError as e:
        raise OffloadError(f"cannot write '{path}': {e.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        kind = "a folder" if stat.S_ISDIR(st.st_mode) else "a FIFO" if stat.S_ISFIFO(st.st_mode) else \
            "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) else "not a regular file"
        raise OffloadError(f"refusing to write '{path}': it is {kind}")


def _umask() -> int:
    current = os.umask(0o022)
    os.umask(current)
    return current


def write_stdout(data: bytes) -> None:
    """`-o -`: text goes anywhere, binary output never to a terminal (as llvm-as refuses)."""
    if sys.stdout.isatty() and not _is_text(data):
        raise OffloadError("refusing to write binary output to a terminal: redirect standard output "
                           "(-o - > FILE) or name a file with -o")
    sys.stdout.flush()
    sys.stdout.buffer.write(data)
    sys.stdout.flush()


def refuse_input_as_output(output: str | os.PathLike, inputs) -> None:
    """An output that is one of the inputs would destroy it: refuse before any work."""
    if str(output) == STDOUT or not os.path.exists(output):
        return
    for given in inputs:
        try:
            same = given is not None and os.path.samefile(output, given)
        except OSError:
            same = False
        if same:
            raise OffloadError(f"output '{output}' is the input '{given}': choose another -o")


def _is_text(data: bytes) -> bool:
    if b"\0" in data:
        return False
    try:
        data.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


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
