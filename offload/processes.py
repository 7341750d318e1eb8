"""Independent per-target serializations side by side, in forked child processes.

llvmlite holds one process-wide lock around every call into LLVM, so threads would only take turns;
forked children share nothing and run on separate cores. Each child sends its result (or the
OffloadError it raised) back pickled through a pipe; a child that dies (an LLVM abort) becomes an
OffloadError naming its target instead of taking the command down. Results come back in input order
and the first failing item's error is the one raised, exactly as a sequential loop would."""

from __future__ import annotations

import os
import pickle
import selectors
import signal
from collections.abc import Callable, Sequence
from typing import TypeVar

from offload import interrupts
from offload.errors import Mention, OffloadError, Words, parts_of

Item = TypeVar("Item")
Result = TypeVar("Result")


def worker_count(items: int, jobs: int | None = None) -> int:
    """How many children run at once: `jobs` if given, else one per usable CPU; never more than items."""
    if jobs is None:
        jobs = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(items, jobs))


def map_forked(
    function: Callable[[Item], Result],
    items: Sequence[Item],
    names: Sequence[str],
    jobs: int | None = None,
    isolate: bool = False,
) -> list[Result]:
    """[function(item) for item in items], in up to `jobs` forked children at a time (in this process
    when that is 1 or the platform cannot fork, unless `isolate`: the items hold untrusted input that
    LLVM parses, so even one runs in a child). names[i] says what items[i] is, for errors."""
    workers = worker_count(len(items), jobs)
    if (workers <= 1 and not isolate) or not hasattr(os, "fork"):
        return [function(item) for item in items]
    outcomes: list = [None] * len(items)
    pending = list(range(len(items)))
    selector = selectors.DefaultSelector()
    received: dict[int, list[bytes]] = {}
    try:
        while pending or selector.get_map():
            while pending and len(selector.get_map()) < workers:
                index = pending.pop(0)
                pid, fd = _start(function, items[index])
                selector.register(fd, selectors.EVENT_READ, (index, pid))
                received[index] = []
            for key, _ in selector.select():
                index, pid = key.data
                chunk = os.read(key.fd, 1 << 20)
                if chunk:
                    received[index].append(chunk)
                    continue
                selector.unregister(key.fd)
                os.close(key.fd)
                _, status = os.waitpid(pid, 0)
                outcomes[index] = _outcome(b"".join(received.pop(index)), status, names[index])
    finally:
        for key in list(selector.get_map().values()):  # interrupted: leave no child behind
            _, pid = key.data
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(key.fd)
        selector.close()
    for outcome in outcomes:
        if isinstance(outcome, OffloadError):
            raise outcome
    return outcomes


class ForkedCall:
    """`function(item)` running in a forked child while this process goes on; `result()` waits for it.
    For MLIR and LLVM steps on untrusted input: the child's death (an abort, a segmentation fault, a
    stack overflow on deep nesting) becomes one OffloadError, `failure` followed by how it died.
    Where the platform cannot fork, the call runs at once, here."""

    def __init__(self, function: Callable[[Item], Result], item: Item, failure: Words):
        self.failure = failure
        self._done: tuple | None = None
        if not hasattr(os, "fork"):
            try:
                self._done = ("ok", function(item))
            except OffloadError as e:
                self._done = ("error", e)
            return
        self._pid, self._fd = _start(function, item)

    def result(self):
        if self._done is None:
            chunks = []
            try:
                while chunk := os.read(self._fd, 1 << 20):
                    chunks.append(chunk)
            finally:
                os.close(self._fd)
                _, status = os.waitpid(self._pid, 0)
            outcome = _outcome(b"".join(chunks), status, failure=self.failure)
            self._done = ("error", outcome) if isinstance(outcome, OffloadError) else ("ok", outcome)
        if self._done[0] == "error":
            raise self._done[1]
        return self._done[1]

    def cancel(self) -> None:
        """The child killed and reaped, where result() has not collected it (the caller failed first)."""
        if self._done is None:
            os.kill(self._pid, signal.SIGKILL)
            os.close(self._fd)
            os.waitpid(self._pid, 0)
            self._done = ("error", OffloadError((*parts_of(self.failure), ": cancelled")))


def call_forked(function: Callable[[Item], Result], item: Item, failure: Words) -> Result:
    """function(item) in a forked child (see ForkedCall)."""
    return ForkedCall(function, item, failure).result()


_forked_child = False  # this process is a child _start forked (or a child's child)


def in_forked_child() -> bool:
    """Whether this process is a child forked for one item (ForkedCall, map_forked), not the command's own."""
    return _forked_child


def _start(function, item) -> tuple[int, int]:
    global _forked_child
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: compute, send, and leave without running the parent's exit handlers
        _forked_child = True
        status = 0
        try:
            interrupts.forked()
            os.close(read_fd)
            captured = _capture_stderr()
            try:
                payload: tuple = ("ok", function(item))
            except OffloadError as e:
                payload = ("error", e.parts, e.location)  # options named as Mentions: the front end words them
            except MemoryError:
                payload = ("error", "out of memory", None)
            except Exception as e:  # noqa: BLE001 - a bug: report it as one line rather than lose it
                payload = ("error", f"internal error: {type(e).__name__}: {e}", None)
            payload = (*payload, _captured_text(captured))
            with os.fdopen(write_fd, "wb") as out:
                out.write(pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL))
        except interrupts.Interrupted as e:  # its temporary folders removed on the way: it ends by the signal
            interrupts.die_in_child(e.signum)
        except BaseException:  # noqa: BLE001 - whatever happens, the child leaves through os._exit
            status = 70
        finally:
            os._exit(status)
    os.close(write_fd)
    return pid, read_fd


def _outcome(data: bytes, status: int, name: str = "", failure: Words | None = None):
    if os.WIFSIGNALED(status):
        how = f"was killed by signal {signal.Signals(os.WTERMSIG(status)).name}"
    elif os.waitstatus_to_exitcode(status) != 0 or not data:
        how = f"exited with status {os.waitstatus_to_exitcode(status)}"
    else:
        payload = pickle.loads(data)
        _replay(payload[-1])
        if payload[0] == "ok":
            return payload[1]
        return OffloadError(payload[1], payload[2])
    # The child died: what it printed (an LLVM assertion, a backtrace) stays unprinted, one line instead.
    if failure is not None:
        return OffloadError((*parts_of(failure), f": the process running MLIR/LLVM {how}"))
    return OffloadError(
        (
            f"serializing the {name} image failed: the process running LLVM {how} (a ",
            Mention("link_bitcode"),
            " library or device library it cannot handle?)",
        )
    )


def _capture_stderr():
    """In a child: its standard error (LLVM's and MLIR's C++ text included) into a temporary file, which the
    parent prints only when the child ends normally: a dying child's assertion text is not the user's."""
    import sys
    import tempfile

    try:
        captured = tempfile.TemporaryFile()
        if sys.stderr is not None:
            sys.stderr.flush()
        os.dup2(captured.fileno(), 2)
        return captured
    except (OSError, ValueError):
        return None


def _captured_text(captured) -> bytes:
    import sys

    if captured is None:
        return b""
    try:
        if sys.stderr is not None:
            sys.stderr.flush()
        captured.seek(0)
        return captured.read()
    except (OSError, ValueError):
        return b""


def _replay(text: bytes) -> None:
    import sys

    if not text or sys.stderr is None:
        return
    try:
        sys.stderr.flush()
        sys.stderr.buffer.write(text)
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        pass


def map_threads(function: Callable[[Item], Result], items: Sequence[Item], jobs: int | None = None) -> list[Result]:
    """[function(item) for item in items] in up to `jobs` threads (default: one per usable CPU), for work
    that waits on processes of its own: results in input order, the first failing item's error raised."""
    from concurrent.futures import ThreadPoolExecutor

    workers = worker_count(len(items), jobs)
    if workers <= 1:
        return [function(item) for item in items]
    pool = ThreadPoolExecutor(max_workers=workers)
    try:
        return list(pool.map(function, items))
    finally:  # failed or interrupted: no item not yet started starts
        pool.shutdown(wait=True, cancel_futures=True)
