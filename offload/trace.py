"""compile -v: each stage with its time, the libraries found and every tool run, on standard error
(as clang -v), written by the process that does the work (device serialization runs in forked children)."""

from __future__ import annotations

import os
import shlex
import sys
import time
from contextlib import contextmanager

from offload import interrupts

# Inherited by forked children, so a child's library and tool lines appear too.
_ENABLED_ENVIRONMENT = "MLIR_OFFLOAD_VERBOSE"


def enable() -> None:
    os.environ[_ENABLED_ENVIRONMENT] = "1"


def enabled() -> bool:
    return os.environ.get(_ENABLED_ENVIRONMENT) == "1"


def note(message: str) -> None:
    if enabled():
        sys.stderr.write(f"mlir-offload: {message}\n")
        sys.stderr.flush()


def library(what: str, path: str) -> None:
    note(f"library {what}: {path}")


def tool(command: list[str]) -> None:
    note("running: " + " ".join(shlex.quote(str(part)) for part in command))


# -ftime-trace: the stages of this process as Chrome trace events (None: not recording).
_events: list[dict] | None = None
_origin = time.perf_counter()
# The progress line on a terminal: the stage now running, shown once the compile has taken this long.
PROGRESS_AFTER_ENVIRONMENT = "MLIR_OFFLOAD_PROGRESS_AFTER"  # seconds; the default is PROGRESS_AFTER
PROGRESS_AFTER = 1.0
_progress = None


@contextmanager
def stage(name: str):
    """Wall time, and CPU time (this process's threads and the children it waited for: tools, forked
    lowering), which a loaded machine inflates less."""
    interrupts.check()
    start, cpu = time.perf_counter(), _cpu_seconds()
    if _progress is not None:
        _progress.show(name)
    yield
    end = time.perf_counter()
    note(f"stage {name}: {(end - start) * 1000:.1f} ms (CPU {(_cpu_seconds() - cpu) * 1000:.1f} ms)")
    if _events is not None:
        _events.append(_event(name, start, end))


@contextmanager
def step(name: str):
    """A step inside a stage that may run in a forked child or a worker thread (each image's codegen): its
    wall time as a -v line. No progress line and no -ftime-trace event: those are the parent's stages'."""
    start = time.perf_counter()
    yield
    note(f"step {name}: {(time.perf_counter() - start) * 1000:.1f} ms")


def _cpu_seconds() -> float:
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def _event(name: str, start: float, end: float) -> dict:
    return {
        "name": name,
        "cat": "mlir-offload",
        "ph": "X",
        "pid": os.getpid(),
        "tid": 0,
        "ts": round((start - _origin) * 1e6),
        "dur": round((end - start) * 1e6),
    }


def record_time_trace() -> None:
    global _events, _origin
    _events, _origin = [], time.perf_counter()


def time_trace(total_name: str) -> bytes:
    """The recorded stages as a Chrome trace (clang -ftime-trace's JSON form), with one event around
    them all named `total_name`."""
    import json

    events = list(_events or [])
    end = time.perf_counter()
    events.insert(0, _event(total_name, _origin, end))
    return (json.dumps({"traceEvents": events, "displayTimeUnit": "ms"}, indent=1) + "\n").encode()


class _ProgressLine:
    """`mlir-offload: <stage>...` on one terminal line once the compile runs longer than `after` seconds,
    rewritten at each stage and erased at the end. Written with os.write: no Python stream lock is held
    when the device step forks."""

    def __init__(self, fd: int, after: float):
        import threading

        self.fd, self.current, self.visible = fd, "", False
        self.lock = threading.Lock()
        self.timer = threading.Timer(after, self._appear)
        self.timer.daemon = True
        self.timer.start()

    def _write(self, text: str) -> None:
        try:
            os.write(self.fd, text.encode("utf-8", errors="replace"))
        except OSError:
            pass

    def _appear(self) -> None:
        with self.lock:
            self.visible = True
            if self.current:
                self._write(f"\r\033[Kmlir-offload: {self.current}...")

    def show(self, name: str) -> None:
        with self.lock:
            self.current = name
            if self.visible:
                self._write(f"\r\033[Kmlir-offload: {name}...")

    def close(self) -> None:
        self.timer.cancel()
        with self.lock:
            if self.visible:
                self._write("\r\033[K")
            self.visible = False


@contextmanager
def progress(stream=sys.stderr):
    """The progress line for the duration of a compile, on a terminal only and not with -v (whose lines
    say the same); never in pipes or logs."""
    global _progress
    try:
        terminal = stream.isatty() and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError):
        terminal = False
    if not terminal or enabled():
        yield
        return
    try:
        after = float(os.environ.get(PROGRESS_AFTER_ENVIRONMENT, PROGRESS_AFTER))
    except ValueError:
        after = PROGRESS_AFTER
    stream.flush()
    _progress = _ProgressLine(stream.fileno(), after)
    try:
        yield
    finally:
        _progress.close()
        _progress = None


__all__ = [
    "enable",
    "enabled",
    "library",
    "note",
    "progress",
    "record_time_trace",
    "stage",
    "step",
    "time_trace",
    "tool",
]
