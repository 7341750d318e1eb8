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

import io
import os
import random
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SEEDS = ROOT / "tests" / "data" / "fuzz"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import fuzz_harness  # noqa: E402
from fuzz_readers import mutate  # noqa: E402

# (seed file, command): every command on every file it is meant for, and on the others (a careless user).
FILES = ("saxpy.offload.bc", "saxpy.hip.bc", "saxpy.portable.o", "saxpy.offloadbinary", "saxpy.cuda.exe")
COMMANDS = ("inspect", "extract", "verify")


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
    fuzzer = fuzz_harness.Fuzzer(
        prefix="fuzz-cli-",
        corpus=corpus,
        case=case,
        try_one=lambda one, scratch: judge(*run_one(one[2], one[1], scratch)),
        label=lambda one: f"{one[2]} {one[0]}",
        file_name=lambda index, one: f"{index}-{one[2]}-{one[0]}",
    )
    return fuzzer.fuzz(iterations, seed, hang_seconds, batch, save, progress)


def main(argv: list[str] | None = None) -> int:
    return fuzz_harness.main(argv, (__doc__ or "").splitlines()[0], 100000, 5.0, fuzz)


if __name__ == "__main__":
    sys.exit(main())
