"""SIGINT, SIGTERM and SIGHUP, handled the same way by every command (installed by offload.cli.run).

The signal goes on at once to every process the command started, their own children included (the
command is their subreaper, so one orphaned on the way is still found): LLVM's tools remove their
temporary files on these signals, a program `run` runs decides for itself. What is still running after
GRACE_S seconds is killed. Then Interrupted unwinds the command: each temporary folder and file of
temporary_folder/removed_unless_kept goes (a second sweep at the exit finishes one whose clean-up the
interrupt itself cut short), and the command exits 128 + N with one line. An interrupt is never
swallowed: one raised inside a finalizer (which Python ignores) is raised again, and a command that
finished anyway still exits 128 + N."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Iterator

from offload.errors import OffloadError

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
GRACE_S = 2.0  # for a child to end after the signal, before SIGKILL
POLL_S = 0.01
STATUS_BASE = 128  # exit status 128 + N, as a shell reports a command a signal stopped
_PR_SET_CHILD_SUBREAPER = 36


class Interrupted(BaseException):
    """A signal stopped the command. Not an Exception (no `except Exception` may swallow it) and not a
    KeyboardInterrupt (click would turn that into its own "Aborted!")."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum

    def line(self) -> str:
        return f"mlir-offload: error: interrupted by {signal.Signals(self.signum).name}"


received: int | None = None  # the first signal this process got
_raised = False  # Interrupted was raised for it (and not lost in a finalizer since)
_handling = False
_closing = False  # the command has ended: a signal is recorded, not raised
_in_child = False  # a forked child: a signal ends it at once, unless it holds a temporary folder
_held = 0  # temporary_folder blocks open in such a child
_native_callbacks: set = set()  # code objects of called_from_native functions
_litter: dict[str, int] = {}  # temporary path -> the pid that made it (a forked child inherits the parent's)
_installed = False


def install() -> None:
    """The handlers, in the main thread of the command's process (once). A signal ignored at start (nohup,
    a background job) stays ignored."""
    global _installed
    if _installed:
        return
    _installed = True
    for signum in SIGNALS:
        if signal.getsignal(signum) is not signal.SIG_IGN:
            signal.signal(signum, _handle)
    sys.unraisablehook = _unraisable
    _become_subreaper()
    # tempfile's first gettempdir() writes and removes a probe file; a forked child that made it first and
    # was killed by a signal in between left it in TMPDIR: the children inherit the answer instead.
    with contextlib.suppress(OSError):
        tempfile.gettempdir()


def _become_subreaper() -> None:
    """Orphans among our descendants become our children rather than init's: still ours to stop."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes  # only here: the process entry point's one use of it

    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # without it a descendant whose parent died first may be missed; the others are still stopped


def _handle(signum: int, frame) -> None:
    global received, _raised, _handling
    if _handling:  # a signal during the hand-over: the one in progress stops everything already
        return
    _handling = True
    try:
        if received is None:
            received = signum
        stop_children(signum)
        if _raised or _closing:
            return  # unwinding already (a second exception would cut a clean-up short), or exiting
        if _called_from_native(frame):
            _send_again()
            return
        _raised = True
    finally:
        _handling = False
    raise Interrupted(received)


def check() -> None:
    """Before new work (a stage, a temporary folder, a program): raise Interrupted where a signal came, even
    one whose Interrupted something swallowed (a library's `except Exception` around a RuntimeError that
    wraps it)."""
    if received is not None and not _closing and not _in_child:
        raise Interrupted(received)


def called_from_native(function):
    """Mark a Python function that C or C++ code calls (an audit hook, an MLIR diagnostic handler): an
    exception raised inside it would go through that code (nanobind turns it into std::terminate)."""
    _native_callbacks.add(function.__code__)
    return function


def _called_from_native(frame) -> bool:
    """Whether the interrupted code runs inside such a callback or an import (an extension module's
    initialization, MLIR's, runs Python code; an exception there crashes it)."""
    while frame is not None:
        code = frame.f_code
        if code in _native_callbacks or code.co_filename.startswith("<frozen importlib"):
            return True
        frame = frame.f_back
    return False


def _send_again() -> None:
    """The signal again from another thread a moment later, when the code it interrupted may have left the
    place where it could not be raised."""
    assert received is not None
    threading.Timer(POLL_S, _send, (os.getpid(), received)).start()


def _unraisable(hook_arguments) -> None:
    """An Interrupted raised inside a finalizer (llvmlite's, logging's) that Python would print and drop:
    no traceback, and the signal comes back so that the command still stops."""
    global _raised
    if isinstance(hook_arguments.exc_value, Interrupted) and received is not None:
        _raised = False
        _send_again()  # raised here, it would escape this hook in turn
        return
    sys.__unraisablehook__(hook_arguments)


def stop_children(signum: int) -> None:
    """Send `signum` to every live descendant, wait up to GRACE_S for them to end, then SIGKILL the rest.
    Zombies are left for their parents to collect (subprocess and our forked-child code wait for theirs)."""
    sent: set[int] = set()
    deadline = time.monotonic() + GRACE_S
    while True:
        live = _live_descendants(os.getpid())
        late = time.monotonic() > deadline
        for pid in live:
            if late:
                _send(pid, signal.SIGKILL)
            elif pid not in sent:
                _send(pid, signum)
                _send(pid, signal.SIGCONT)  # a stopped child acts on the signal
        sent |= live
        if not live:
            return
        time.sleep(POLL_S)


def _send(pid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signum)


def _live_descendants(root: int) -> set[int]:
    """The processes below `root` that have not ended (from /proc; none where there is no /proc)."""
    parents: dict[int, list[int]] = {}
    state: dict[int, str] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return set()
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                text = stat.read()
        except OSError:
            continue
        fields = text[text.rfind(b")") + 2 :].split()  # the name may hold spaces and parentheses
        if len(fields) < 2:
            continue
        pid = int(entry)
        state[pid] = fields[0].decode("ascii", "replace")
        parents.setdefault(int(fields[1]), []).append(pid)
    found: set[int] = set()
    work = [root]
    while work:
        for child in parents.get(work.pop(), []):
            if child not in found:
                found.add(child)
                work.append(child)
    return {pid for pid in found if state.get(pid) not in ("Z", "X")}


def forked() -> None:
    """In a forked child: a signal ends it at once (the default action), not after the C call it may be
    in (MLIR, LLVM); while it holds a temporary folder, the handler takes over to remove it first."""
    global _in_child, _held
    _in_child, _held = True, 0
    _handle_in_child(False)


def _handle_in_child(handle: bool) -> None:
    if _in_child and threading.current_thread() is threading.main_thread():
        for signum in SIGNALS:
            if signal.getsignal(signum) in (_handle, signal.SIG_DFL):
                signal.signal(signum, _handle if handle else signal.SIG_DFL)


@contextlib.contextmanager
def temporary_folder(prefix: str, folder: str | None = None) -> Iterator[str]:
    """A new private folder (as tempfile.TemporaryDirectory), removed at the end of the block, and by the
    exit's sweep where an interrupt cut its removal short. The name is recorded before the folder exists,
    so no moment leaves one unrecorded."""
    global _held
    check()
    _held += 1
    if _held == 1:
        _handle_in_child(True)
    try:
        with _recorded_folder(prefix, folder) as path:
            yield path
    finally:
        _held -= 1
        if _held == 0:
            _handle_in_child(False)


@contextlib.contextmanager
def _recorded_folder(prefix: str, folder: str | None) -> Iterator[str]:
    parent = folder if folder is not None else tempfile.gettempdir()
    while True:
        # secrets.token_hex(4) is this; importing secrets (hmac, OpenSSL) would cost every command 3 ms
        path = os.path.join(parent, prefix + os.urandom(4).hex())
        _litter[path] = os.getpid()
        try:
            os.mkdir(path, 0o700)
            break
        except FileExistsError:
            del _litter[path]
        except OSError as e:  # a full disk, a TMPDIR that is not there: the cause, in one line
            del _litter[path]
            raise OffloadError(f"cannot create a temporary folder in '{parent}': {e.strerror}") from None
        except BaseException:
            del _litter[path]
            raise
    try:
        yield path
    finally:
        _remove(path)
        _litter.pop(path, None)


@contextlib.contextmanager
def removed_unless_kept(path: str) -> Iterator[str]:
    """A temporary file's name (an output's before its rename): removed at the end of the block if it still
    exists, and by the exit's sweep if an interrupt came first."""
    _litter[path] = os.getpid()
    try:
        yield path
    finally:
        _remove(path)
        _litter.pop(path, None)


def sweep() -> None:
    """Remove what this process's temporary_folder/removed_unless_kept blocks left (an interrupted exit)."""
    for path, owner in list(_litter.items()):
        if owner == os.getpid():
            _remove(path)
            _litter.pop(path, None)


def _remove(path: str) -> None:
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        elif os.path.lexists(path):
            os.unlink(path)
    except OSError:
        pass


def stop_raising() -> None:
    """The command has ended (or is unwinding): a signal from now on is recorded, never raised."""
    global _closing
    _closing = True


def exit_status(code: int) -> int:
    """The command's exit status: `code`, or where a signal came (even one the command went on after),
    128 + N once what was started after it is stopped, what is left removed and the one line printed."""
    global _handling
    _handling = True  # from here on a further signal changes nothing
    if received is None:
        return code
    stop_children(received)
    sweep()
    with contextlib.suppress(OSError, ValueError, AttributeError):
        sys.stderr.flush()
    with contextlib.suppress(OSError):
        os.write(2, (Interrupted(received).line() + "\n").encode())
    return STATUS_BASE + received


def die_in_child(signum: int) -> None:
    """A forked child that got the signal: its own temporaries gone, it ends by that signal (its parent
    reports how it died)."""
    stop_children(signum)
    sweep()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
    os._exit(STATUS_BASE + signum)


__all__ = [
    "Interrupted",
    "die_in_child",
    "exit_status",
    "forked",
    "called_from_native",
    "check",
    "install",
    "stop_raising",
    "removed_unless_kept",
    "stop_children",
    "sweep",
    "temporary_folder",
]
