#!/usr/bin/env python3
"""Fuzz the commands that read untrusted files (inspect, extract, verify) with mutated real bundles and
executables (fixed seed), each run as a user runs it (offload.cli.main with the command's arguments) in a
forked child. A crash is an exit status other than 0 or 1, an exception escaping main, an internal error,
a traceback, an error that is not one line (a note repeating the error counts), or a failed run that left
a file or printed on standard output (partial output); a hang is an input taking longer than --hang-seconds.

    python3 scripts/fuzz_cli.py [--iterations N] [--seed S] [--save DIR]

Prints the number of inputs, crashes and hangs; exits 1 on any crash or hang. The mutations are
fuzz_readers.py's; the inputs run in forked children (a batch each), so a native crash is caught too."""

from __future__ import annotations

import argparse
import io
import os
import random
import shutil
import signal
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SEEDS = ROOT / "tests" / "data" / "fuzz"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from fuzz_readers import mutate  # noqa: E402

# (seed file, command): every command on every file it is meant for, and on the others (a careless user).
FILES = ("saxpy.offload.bc", "saxpy.hip.bc", "saxpy.portable.o", "saxpy.offloadbinary", "saxpy.cuda.exe")
COMMANDS = ("inspect", "extract", "verify")


class Hang(BaseException):  # not an Exception: no handler of the command catches it
    pass


def _alarm(signum, frame):
    raise Hang()


def seeds() -> list[tuple[str, bytes, str]]:
    return [(name, (SEEDS / name).read_bytes(), command) for command in COMMANDS for name in FILES]


def case(seed: int, index: int, corpus):
    rng = random.Random(seed * 1_000_003 + index)
    name, data, command = corpus[index % len(corpus)]
    return name, mutate(data, rng), command


def arguments(command: str, path: str, scratch: str) -> list[str]:
    return {
        "inspect": ["inspect", path],
        "verify": ["verify", path],
        "extract": ["extract", path, "-o", os.path.join(scratch, "out")],
    }[command]


def judge(status, stderr: str, stdout: str = "", left: tuple[str, ...] = ()) -> str | None:
    """Why this run is a crash, or None. `left`: the files a run left beside its input (a failed run
    leaves none, and writes nothing to standard output: no partial output)."""
    if status not in (0, 1):
        return f"exit status {status!r}"
    if status == 1 and left:
        return f"a failed run left {', '.join(left)}"
    if status == 1 and stdout:
        return f"a failed run printed on standard output: {stdout[-200:]!r}"
    lines = stderr.splitlines()
    if "Traceback" in stderr or "internal error" in stderr:
        return f"internal error: {stderr[-300:]!r}"
    if status == 1:
        errors = [line for line in lines if ": error: " in line]
        notes = [line for line in lines if ": note: " in line]
        if len(errors) != 1 or len(errors) + len(notes) != len(lines):
            return f"not one error line: {stderr[-300:]!r}"
        said = errors[0].split(": error: ", 1)[1]
        if any(note.split(": note: ", 1)[1] in said for note in notes):
            return f"a note repeats the error: {stderr[-300:]!r}"
    return None


def run_one(command: str, data: bytes, scratch: str) -> tuple[object, str, str, tuple[str, ...]]:
    """offload.cli.main on the input, as a user runs it: (exit status, standard error, standard output,
    the files it left beside the input)."""
    from offload import cli

    path = os.path.join(scratch, "input")
    Path(path).write_bytes(data)
    shutil.rmtree(os.path.join(scratch, "out"), ignore_errors=True)
    out, err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8"), io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    status: str | int = 0  # SystemExit carries an exit code or a message
    try:
        cli.main(arguments(command, path, scratch))
    except SystemExit as e:
        status = e.code if e.code is not None else 0
    finally:
        sys.stdout, sys.stderr = saved
    err.flush()
    out.flush()
    left = tuple(sorted(name for name in os.listdir(scratch) if name != "input"))
    return (
        status,
        err.buffer.getvalue().decode("utf-8", "replace"),
        out.buffer.getvalue().decode("utf-8", "replace"),
        left,
    )


def run_batch(seed: int, start: int, stop: int, corpus, hang_seconds: float, report_fd: int) -> None:
    signal.signal(signal.SIGALRM, _alarm)
    report = os.fdopen(report_fd, "w", buffering=1)
    with tempfile.TemporaryDirectory(prefix="fuzz-cli-") as scratch:
        for index in range(start, stop):
            name, data, command = case(seed, index, corpus)
            report.write(f"{index} start\n")
            signal.setitimer(signal.ITIMER_REAL, hang_seconds)
            status, detail = "ok", ""
            try:
                why = judge(*run_one(command, data, scratch))
                if why:
                    status, detail = "crash", f"{command} {name}: {why}"
            except Hang:
                status, detail = "hang", f"{command} {name}"
            except BaseException as e:  # noqa: BLE001 - escaped main: a crash
                frame = traceback.extract_tb(e.__traceback__)[-1]
                status, detail = "crash", f"{command} {name}: {type(e).__name__}: {e} @ {frame.filename}:{frame.lineno}"
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            report.write(f"{index} {status} {detail}".replace("\n", " ") + "\n")
    report.close()


def fuzz(
    iterations: int,
    seed: int,
    hang_seconds: float = 5.0,
    batch: int = 1000,
    save: str | None = None,
    progress: bool = False,
) -> dict:
    corpus = seeds()
    with tempfile.TemporaryDirectory(prefix="fuzz-cli-") as scratch:  # imports once, before the children fork
        for _, data, command in corpus:
            run_one(command, data, scratch)
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
                run_batch(seed, index, stop, corpus, hang_seconds, write_fd)
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
                    _save(save, seed, int(number), corpus)
        _, wait_status = os.waitpid(pid, 0)
        if done < stop:  # the child died inside input `last_started`
            dead = last_started if last_started is not None else done
            how = (
                f"signal {os.WTERMSIG(wait_status)}"
                if os.WIFSIGNALED(wait_status)
                else f"exit {os.WEXITSTATUS(wait_status)}"
            )
            name, _, command = case(seed, dead, corpus)
            results["native"].append((dead, f"{command} {name}: child died ({how})"))
            results["inputs"] += 1
            _save(save, seed, dead, corpus)
            index = dead + 1
        else:
            index = stop
        if progress:
            print(f"  {results['inputs']} inputs, {time.time() - started:.0f} s", file=sys.stderr, flush=True)
    results["seconds"] = time.time() - started
    return results


def _save(folder: str | None, seed: int, index: int, corpus) -> None:
    if folder:
        name, data, command = case(seed, index, corpus)
        os.makedirs(folder, exist_ok=True)
        Path(folder, f"{index}-{command}-{name}").write_bytes(data)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=int(os.environ.get("MLIR_OFFLOAD_FUZZ_ITERATIONS", "100000")))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--hang-seconds", type=float, default=5.0)
    parser.add_argument("--save", help="write every crashing or hanging input into this folder")
    parser.add_argument("--progress", action="store_true")
    args = parser.parse_args(argv)
    results = fuzz(args.iterations, args.seed, args.hang_seconds, save=args.save, progress=args.progress)
    for what, label in (("crashes", "crash"), ("hangs", "hang"), ("native", "native crash")):
        for index, detail in results[what][:20]:
            print(f"{label}: input {index}: {detail}")
    print(
        f"inputs {results['inputs']}, crashes {len(results['crashes'])}, native crashes "
        f"{len(results['native'])}, hangs {len(results['hangs'])}, seconds {results['seconds']:.1f}"
    )
    return 1 if results["crashes"] or results["hangs"] or results["native"] else 0


if __name__ == "__main__":
    sys.exit(main())
