"""Output files appear whole or not at all: write a temporary file beside the target, then rename."""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import tempfile
from pathlib import Path

from offload.errors import OffloadError

STDOUT = "-"  # `-o -`: the output goes to standard output, as with clang and the LLVM tools
STDIN = "-"  # the input path that reads the program from standard input, as mlir-opt does


def random_hex(size: int) -> str:
    """`size` random bytes as hex, for a temporary name no other process picks: secrets.token_hex(size),
    without importing secrets (hmac, OpenSSL: 3 ms at every start of every command)."""
    return os.urandom(size).hex()


def atomic_write(path: str | os.PathLike, data: bytes, mode: int = 0o644, inputs=()) -> None:
    write_all({path: data}, mode, inputs)


def write_all(outputs: dict, mode: int = 0o644, inputs=()) -> None:
    """Write every path -> bytes of `outputs` all or nothing: each goes to a temporary file beside it, and
    only when all are written are they renamed into place (a rename that fails removes the renamed ones).
    Modes honour the umask. Before anything is written, check_outputs: no output an input, no two outputs
    one file, none a device, FIFO or folder; an output naming standard output (`-`, /dev/stdout, a link to
    it) is written through it, last, never replaced."""
    check_outputs(list(outputs), inputs)
    streams = {path: (fd, data) for path, data in outputs.items() if (fd := stream_of(path)) is not None}
    mode &= ~_umask()
    written: list[tuple[str, Path]] = []
    try:
        for path, data in outputs.items():
            if path in streams:
                continue
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
    for fd, data in streams.values():
        write_stream(fd, data)


def check_outputs(outputs, inputs=()) -> None:
    """Before any work is written: each output may be written (check_output), and, with links followed
    and `./`, `sub/..` spelled out, no output is an input or another output of the same command."""
    seen: dict = {}
    for path in outputs:
        if path is None:
            continue
        check_output(path)
        key = _identity(path)
        if key in seen:
            if str(seen[key]) == str(path):
                raise OffloadError(f"two outputs name the same file '{path}'")
            raise OffloadError(f"two outputs name the same file: '{seen[key]}' and '{path}'")
        seen[key] = path
    for given in inputs:
        if given is None or str(given) == STDOUT:
            continue
        key = _identity(given)
        if key in seen:
            output = seen[key]
            if str(output) == str(given):
                raise OffloadError(f"output '{output}' is the input '{given}': choose another -o")
            raise OffloadError(f"output '{output}' is the input '{given}' (links followed): choose another -o")


def same_file(a, b) -> bool:
    """Whether paths `a` and `b` name one file once links, `./` and `sub/..` are followed."""
    return _identity(a) == _identity(b)


def _identity(path) -> tuple:
    """What a path names once links are followed: its device and inode where it exists (hard links too),
    else its resolved path; standard output (`-` or a link to it) is fd 1."""
    stream = stream_of(path)
    if stream is not None:
        try:
            st = os.fstat(stream)
            return ("file", st.st_dev, st.st_ino)
        except OSError:
            return ("stream", stream)
    try:
        st = os.stat(path)
        return ("file", st.st_dev, st.st_ino)
    except (OSError, ValueError):
        return ("path", os.path.realpath(path))


def stream_of(path) -> int | None:
    """1 (2) when writing `path` means writing standard output (error): `-`, or a link (/dev/stdout,
    /proc/self/fd/1, a user's link to either) to the file that stream is open on; else None."""
    if str(path) == STDOUT:
        return 1
    try:
        if not os.path.islink(path):
            return None
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    for fd in (1, 2):
        try:
            open_on = os.fstat(fd)
        except OSError:
            continue
        if (open_on.st_dev, open_on.st_ino) == (st.st_dev, st.st_ino):
            return fd
    return None


def refuse_binary_to_terminal(path: str | os.PathLike, what: str, also: str = "") -> None:
    """`-o -` with standard output on a terminal: binary bytes there would garble it (LLVM's tools refuse too)."""
    import sys

    if str(path) == STDOUT and sys.stdout is not None and sys.stdout.isatty():
        raise OffloadError(
            f"not writing {what} to a terminal (-o -): redirect standard output to a file or a pipe, "
            f"or name a file with -o{also}"
        )


def check_output(path: str | os.PathLike) -> None:
    """An output may replace a regular file or nothing, or write through standard output: never a device
    node, a FIFO, a folder, or a link into /dev or /proc (replacing /dev/stdout would break the system)."""
    if str(path) == STDOUT or stream_of(path) is not None:
        return
    if not str(path):
        raise OffloadError("the output's name is empty: name a file")
    try:
        st = os.stat(path)
    except FileNotFoundError:
        if os.path.islink(path) and os.path.realpath(path).startswith(("/dev/", "/proc/")):
            raise OffloadError(
                f"refusing to write '{path}': it is a link to a closed stream or missing device"
            ) from None
        return
    except OSError as e:
        raise OffloadError(f"cannot write '{path}': {e.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        kind = (
            "a folder"
            if stat.S_ISDIR(st.st_mode)
            else "a FIFO"
            if stat.S_ISFIFO(st.st_mode)
            else "a device"
            if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode)
            else "not a regular file"
        )
        raise OffloadError(f"refusing to write '{path}': it is {kind}")
    if os.path.islink(path) and os.path.realpath(path).startswith(("/dev/", "/proc/")):
        raise OffloadError(f"refusing to write '{path}': it is a link into {os.path.realpath(path)[:5]}")


@contextlib.contextmanager
def output_folder(directory: str | os.PathLike):
    """Create `directory` (and its missing parents) for outputs; if the block fails, remove the folders
    created here (a failed step leaves what was there). A folder that cannot be made is one error."""
    created: list[str] = []
    folder = os.path.normpath(directory)
    while folder not in ("", ".", os.sep) and not os.path.lexists(folder):
        created.append(folder)
        folder = os.path.dirname(folder)
    try:
        try:
            os.makedirs(directory, exist_ok=True)
        except OSError as e:
            raise OffloadError(f"cannot create the folder '{directory}': {e.strerror}") from None
        yield
    except BaseException:
        for made in created:  # innermost first; one not empty stays
            try:
                os.rmdir(made)
            except OSError:
                break
        raise


def _umask() -> int:
    current = os.umask(0o022)
    os.umask(current)
    return current


def write_stdout(data: bytes) -> None:
    write_stream(1, data)


def write_stream(fd: int, data: bytes) -> None:
    """`-o -`: text goes anywhere, binary output never to a terminal (as llvm-as refuses)."""
    name = "output" if fd == 1 else "error"
    stream = sys.stdout if fd == 1 else sys.stderr
    if stream is None or getattr(stream, "buffer", None) is None:
        raise OffloadError(f"cannot write standard {name}: it is closed")
    try:
        if stream.isatty() and not _is_text(data):
            raise OffloadError(
                "refusing to write binary output to a terminal: redirect standard output "
                "(-o - > FILE) or name a file with -o"
            )
        stream.flush()
        stream.buffer.write(data)
        stream.flush()
    except (OSError, ValueError) as e:
        raise OffloadError(f"cannot write standard {name}: {getattr(e, 'strerror', None) or 'it is closed'}") from None


def refuse_input_as_output(output: str | os.PathLike, inputs) -> None:
    """An output that is one of the inputs would destroy it: refuse before any work."""
    if output is None or str(output) == STDOUT:
        return
    check_outputs([output], inputs)


def _is_text(data: bytes) -> bool:
    if b"\0" in data:
        return False
    try:
        data.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def read_input(path: str | os.PathLike) -> bytes:
    """The bytes of an input file (a regular file, a pipe, /dev/null); a device that never ends (/dev/zero,
    /dev/urandom) is refused rather than read until memory runs out."""
    try:
        with open(path, "rb") as f:
            refuse_endless_device(f.fileno(), f"'{path}'")
            return f.read()
    except FileNotFoundError:
        raise OffloadError(f"no such file: '{path}'") from None
    except IsADirectoryError:
        raise OffloadError(f"'{path}' is a directory, not a file") from None
    except OSError as e:
        raise OffloadError(f"cannot read '{path}': {e.strerror}") from None


def refuse_endless_device(fd: int, what: str) -> None:
    """A character or block device other than a terminal or /dev/null may never end: refuse to read it."""
    st = os.fstat(fd)
    if not (stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode)) or os.isatty(fd):
        return
    try:
        if st.st_rdev == os.stat(os.devnull).st_rdev:
            return
    except OSError:
        pass
    raise OffloadError(f"{what} is a device, not a file")


def current_folder() -> str | None:
    """The current folder, or None when it is gone (deleted) or unreadable (a parent without search permission)."""
    try:
        return os.getcwd()
    except OSError:
        return None


def current_folder_error(why: str = "") -> OffloadError:
    """One error line for work that needs the current folder when it is gone or unreadable."""
    need = f" ({why})" if why else ""
    return OffloadError(
        f"the current folder is gone or unreadable{need}: name files by absolute paths, or cd to a folder that exists"
    )


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
