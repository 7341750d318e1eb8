"""The driver both fuzzers share (scripts/fuzz_readers.py, scripts/fuzz_cli.py): deterministic inputs
from (seed, index), run in batches in forked children so that a native crash is caught and the run goes
on after it, a hang timer per input, and one summary line."""

from __future__ import annotations

import argparse
import os
import resource
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class Hang(BaseException):  # not an Exception: no handler of the code under test catches it
    pass


def _alarm(signum, frame):
    raise Hang()


def escaped(error: BaseException) -> str:
    """An exception that escaped the code under test, with where it was raised."""
    frame = traceback.extract_tb(error.__traceback__)[-1]
    return f"{type(error).__name__}: {error} @ {frame.filename}:{frame.lineno}"


@dataclass(frozen=True)
class Fuzzer:
    """What a fuzzer supplies: its corpus's index-th mutated input, how to try one (returns why it is a
    crash, or None; a Hang propagates), and how an input is named in reports and saved files."""

    prefix: str  # of its scratch folders
    corpus: Sequence[Any]
    case: Callable[[int, int, Sequence[Any]], tuple[str, bytes, Any]]
    try_one: Callable[[tuple[str, bytes, Any], str], str | None]
    label: Callable[[tuple[str, bytes, Any]], str]
    file_name: Callable[[int, tuple[str, bytes, Any]], str]

    def run_batch(self, seed: int, start: int, stop: int, hang_seconds: float, report_fd: int) -> None:
        """In a forked child: inputs start..stop-1, each reported as an "index status detail" line."""
        signal.signal(signal.SIGALRM, _alarm)
        report = os.fdopen(report_fd, "w", buffering=1)
        with tempfile.TemporaryDirectory(prefix=self.prefix) as scratch:
            for index in range(start, stop):
                one = self.case(seed, index, self.corpus)
                report.write(f"{index} start\n")
                signal.setitimer(signal.ITIMER_REAL, hang_seconds)
                status, detail = "ok", ""
                try:
                    why = self.try_one(one, scratch)
                    if why:
                        status, detail = "crash", f"{self.label(one)}: {why}"
                except Hang:
                    status, detail = "hang", self.label(one)
                except BaseException as e:  # noqa: BLE001 - escaped the code under test: a crash
                    status, detail = "crash", f"{self.label(one)}: {escaped(e)}"
                finally:
                    signal.setitimer(signal.ITIMER_REAL, 0)
                report.write(f"{index} {status} {detail}".replace("\n", " ") + "\n")
        report.close()

    def save(self, folder: str | None, seed: int, index: int) -> None:
        if folder:
            one = self.case(seed, index, self.corpus)
            os.makedirs(folder, exist_ok=True)
            Path(folder, self.file_name(index, one)).write_bytes(one[1])

    def fuzz(
        self, iterations: int, seed: int, hang_seconds: float, batch: int, save: str | None, progress: bool
    ) -> dict:
        results: dict[str, Any] = {"inputs": 0, "crashes": [], "hangs": [], "native": []}
        started = time.time()
        index = 0
        while index < iterations:
            stop = min(iterations, index + batch)
            read_fd, write_fd = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(read_fd)
                code = 0
                try:
                    self.run_batch(seed, index, stop, hang_seconds, write_fd)
                except BaseException:  # noqa: BLE001
                    traceback.print_exc()
                    code = 70
                os._exit(code)
            os.close(write_fd)
            last_started, done = None, index
            with os.fdopen(read_fd) as lines:
                for line in lines:
                    number, status, *detail = line.rstrip("\n").split(" ", 2)
                    if status == "start":
                        last_started = int(number)
                        continue
                    done = int(number) + 1
                    results["inputs"] += 1
                    if status in ("crash", "hang"):
                        results["crashes" if status == "crash" else "hangs"].append((int(number), " ".join(detail)))
                        self.save(save, seed, int(number))
            _, wait_status = os.waitpid(pid, 0)
            if done < stop:  # the child died inside input `last_started`: a native crash (or an exit)
                dead = last_started if last_started is not None else done
                how = (
                    f"signal {os.WTERMSIG(wait_status)}"
                    if os.WIFSIGNALED(wait_status)
                    else f"exit {os.WEXITSTATUS(wait_status)}"
                )
                results["native"].append(
                    (dead, f"{self.label(self.case(seed, dead, self.corpus))}: child died ({how})")
                )
                results["inputs"] += 1
                self.save(save, seed, dead)
                index = dead + 1
            else:
                index = stop
            if progress:
                print(f"  {results['inputs']} inputs, {time.time() - started:.0f} s", file=sys.stderr, flush=True)
        results["seconds"] = time.time() - started
        results["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        return results


def main(
    argv: list[str] | None, description: str, iterations: int, hang_seconds: float, fuzz: Callable[..., dict]
) -> int:
    """The command line both fuzzers take; exit 1 on any crash, native crash or hang."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "--iterations", type=int, default=int(os.environ.get("MLIR_OFFLOAD_FUZZ_ITERATIONS", str(iterations)))
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--hang-seconds", type=float, default=hang_seconds)
    parser.add_argument("--save", help="write every crashing or hanging input into this folder")
    parser.add_argument("--progress", action="store_true")
    args = parser.parse_args(argv)
    results = fuzz(args.iterations, args.seed, args.hang_seconds, save=args.save, progress=args.progress)
    for what, label in (("crashes", "crash"), ("hangs", "hang"), ("native", "native crash")):
        for index, detail in results[what][:20]:
            print(f"{label}: input {index}: {detail}")
    print(
        f"inputs {results['inputs']}, crashes {len(results['crashes'])}, native crashes "
        f"{len(results['native'])}, hangs {len(results['hangs'])}, seconds {results['seconds']:.1f}, "
        f"peak memory {results['peak_rss_mib']:.0f} MiB"
    )
    return 1 if results["crashes"] or results["hangs"] or results["native"] else 0
