#!/usr/bin/env python3
"""Interrupt compile, link, link --emulate, run --emulate and a `make -j8` of examples/hpc-make at random
moments (seeded: the command, the signal, whether it goes to the command alone or to its process group as
a terminal's Ctrl-C does, and the moment) and check what each interrupted command leaves behind:

  litter    anything left in the private TMPDIR the commands run with, or a temporary name beside an output
  orphan    a process still alive in the command's session after the command exited
  partial   an output that exists but is not the one an uninterrupted run writes (the outputs are
            deterministic: same input and flags, same bytes)
  message   more than one line of standard error from an mlir-offload command; a traceback, "Exception
            ignored" or an internal error from any
  status    an mlir-offload command that exits with neither 128 + N nor (having finished first) 0
  hang      a command still running 60 s after the signal

    python3 scripts/stress_interrupts.py [--rounds N] [--seed S] [--kernels K] [--no-make] [--keep]

The moments of an mlir-offload command count from when it has its handlers (a signal in Python's own
start-up has Python's default effect: docs/outputs-and-errors.md); a problem of a make round whose signal
found one of its mlir-offload commands still starting is counted apart, as "startup".
Prints each problem as it is found, then the figures; exits 1 on any problem. Runs the checkout's own code
(PYTHONPATH), with a private TMPDIR and cache folder; needs clang-22 (and CUDA for the GPU link and make)."""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
HANG_S = 60.0
SETTLE_S = 5.0  # for the processes of an exited command to disappear
ARCHS = "sm_80,sm_90"
BAD_WORDS = ("Traceback", "Exception ignored", "internal error")
# A program that runs until it is stopped: a kernel launched a billion times.
SPIN = (ROOT / "tests" / "data" / "interrupts" / "spin.mlir").read_text()


@dataclass
class Scenario:
    name: str
    argv: list[str]
    folder: Path  # where it runs and writes
    outputs: dict[str, str]  # file name in folder -> sha256 of an uninterrupted run's
    ours: bool  # an mlir-offload command (make is not)
    seconds: float = 1.0  # an uninterrupted run's wall time (the moments are drawn up to it)
    endless: bool = False  # never finishes by itself (run of SPIN)
    before: list[str] = field(default_factory=list)  # a command run first (make clean)
    clang_stems: tuple[str, ...] = ()  # make's .cu sources, which clang itself compiles (its temporaries are not ours)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def offload_command(*words: str) -> list[str]:
    return [sys.executable, "-m", "offload", *words]


def handles_signals(pid: int) -> bool:
    """Whether the process catches SIGTERM: an mlir-offload command past Python's own start-up."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("SigCgt:"):
                return bool(int(line.split()[1], 16) >> (signal.SIGTERM - 1) & 1)
    except (OSError, ValueError):
        pass
    return False


def starting_commands(session: int) -> list[int]:
    """mlir-offload commands of the session still in Python's start-up (no handlers yet)."""
    return [
        pid
        for pid, command in session_processes(session).items()
        if " -m offload " in command and not handles_signals(pid)
    ]


def session_processes(session: int) -> dict[int, str]:
    """The live processes of a session: pid -> command line (also tests/unit/test_interrupts.py's)."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_bytes()
            fields = stat[stat.rfind(b")") + 2 :].split()
            if int(fields[3]) != session or fields[0] in (b"Z", b"X"):
                continue
            found[int(entry)] = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, ValueError, IndexError):
            continue
    return found


class Stress:
    def __init__(self, work: Path, kernels: int, make: bool):
        self.work = work
        self.tmp = work / "tmp"
        self.tmp.mkdir()
        self.env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
            "TMPDIR": str(self.tmp),
            "MLIR_OFFLOAD_CACHE_DIR": str(work / "cache"),
        }
        self.env.pop("MLIR_OFFLOAD_REMOTE_CACHE", None)
        self.scenarios = self._prepare(kernels, make)

    def _run(self, argv: list[str], cwd: Path) -> float:
        start = time.monotonic()
        done = subprocess.run(argv, cwd=cwd, env=self.env, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"stress_interrupts: set-up failed: {' '.join(argv)}: {done.stderr.strip()[-600:]}")
        return time.monotonic() - start

    def _reference(self, scenario: Scenario, names: list[str]) -> Scenario:
        for command in [scenario.before] if scenario.before else []:
            self._run(command, scenario.folder)
        scenario.seconds = self._run(scenario.argv, scenario.folder)
        scenario.outputs = {name: digest(scenario.folder / name) for name in names}
        return scenario

    def _prepare(self, kernels: int, make: bool) -> list[Scenario]:
        from bench_e2e import generate_mlir

        programs = self.work / "programs"
        programs.mkdir()
        (programs / "big.mlir").write_text(generate_mlir(kernels))
        (programs / "spin.mlir").write_text(SPIN)
        shutil.copy(ROOT / "examples" / "saxpy.mlir", programs / "saxpy.mlir")
        self._run(offload_command("compile", "saxpy.mlir", "--offload-arch", "sm_80", "-o", "saxpy.bc"), programs)
        self._run(offload_command("link", "--emulate", "saxpy.bc", "-o", "warm"), programs)  # the emulator's build
        scenarios = []

        def folder(name: str) -> Path:
            path = self.work / name
            path.mkdir()
            return path

        compile_folder = folder("compile")
        scenarios.append(
            self._reference(
                Scenario(
                    "compile",
                    offload_command(
                        "compile", str(programs / "big.mlir"), "--offload-arch", ARCHS, "--no-cache", "-o", "big.bc"
                    ),
                    compile_folder,
                    {},
                    True,
                ),
                ["big.bc"],
            )
        )
        emulate_folder = folder("link-emulate")
        scenarios.append(
            self._reference(
                Scenario(
                    "link --emulate",
                    offload_command("link", "--emulate", str(programs / "saxpy.bc"), "-o", "app"),
                    emulate_folder,
                    {},
                    True,
                ),
                ["app"],
            )
        )
        link_folder = folder("link")
        gpu_link = Scenario(
            "link", offload_command("link", str(programs / "saxpy.bc"), "-o", "app"), link_folder, {}, True
        )
        if subprocess.run(gpu_link.argv, cwd=link_folder, env=self.env, capture_output=True).returncode == 0:
            scenarios.append(self._reference(gpu_link, ["app"]))
        else:
            print("stress_interrupts: no GPU link here (no CUDA toolkit?): link is left out", flush=True)
        run_folder = folder("run-emulate")
        run = Scenario(
            "run --emulate",
            offload_command("run", str(programs / "spin.mlir"), "--offload-arch", "sm_80", "--emulate"),
            run_folder,
            {},
            True,
            endless=True,
        )
        # Its compile and link: the moments reach into the program's run by 2 s.
        run.seconds = self._run(
            offload_command("compile", str(programs / "spin.mlir"), "--offload-arch", "sm_80", "-o", "spin.bc"),
            run_folder,
        ) + self._run(offload_command("link", "--emulate", "spin.bc", "-o", "spin"), run_folder)
        run.seconds += 2.0
        for name in ("spin.bc", "spin"):
            (run_folder / name).unlink()
        scenarios.append(run)
        if make:
            hpc = self.work / "hpc-make"
            shutil.copytree(ROOT / "examples" / "hpc-make", hpc)
            sources = {path.name for path in hpc.iterdir()}
            tool = f"MLIR_OFFLOAD={sys.executable} -m offload"
            build = Scenario("make -j8", ["make", "-j8", tool], hpc, {}, False, before=["make", tool, "clean"])
            build.clang_stems = tuple(path.stem for path in hpc.glob("*.cu"))
            if subprocess.run(build.argv, cwd=hpc, env=self.env, capture_output=True).returncode == 0:
                built = sorted(path.name for path in hpc.iterdir() if path.name not in sources)
                scenarios.append(self._reference(build, built))
            else:
                print("stress_interrupts: examples/hpc-make does not build here: make is left out", flush=True)
        return scenarios

    def round(self, rng: random.Random) -> list[tuple[str, str]]:
        """One interrupted command: its problems as (kind, description)."""
        scenario = rng.choice(self.scenarios)
        signum = rng.choice(SIGNALS)
        # make's children get a Ctrl-C from the terminal, not from make: SIGINT and SIGHUP go to the group.
        group = rng.random() < 0.5 or (not scenario.ours and signum != signal.SIGTERM)
        delay = rng.uniform(0.0, scenario.seconds * 1.2)
        label = (
            f"{scenario.name}: {signal.Signals(signum).name} to the {'group' if group else 'process'} at {delay:.2f}s"
        )
        if scenario.before:
            subprocess.run(scenario.before, cwd=scenario.folder, env=self.env, capture_output=True)
        for name in scenario.outputs:
            (scenario.folder / name).unlink(missing_ok=True)
        errors = self.work / "stderr.txt"
        with open(errors, "wb") as stderr:
            child = subprocess.Popen(
                scenario.argv,
                cwd=scenario.folder,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                start_new_session=True,
            )
            if scenario.ours:  # the moments count from the end of Python's own start-up
                waited = time.monotonic() + HANG_S
                while not handles_signals(child.pid) and child.poll() is None and time.monotonic() < waited:
                    time.sleep(0.002)
            time.sleep(delay)
            finished_first = child.poll() is not None
            starting = [] if finished_first else starting_commands(child.pid)
            if not finished_first:
                (os.killpg if group else os.kill)(child.pid, signum)
            problems = []
            try:
                status = child.wait(timeout=HANG_S)
            except subprocess.TimeoutExpired:
                problems.append(f"hang: still running {HANG_S:.0f} s after the signal")
                os.killpg(child.pid, signal.SIGKILL)
                status = child.wait()
        problems += self._check(scenario, child.pid, status, signum, finished_first, errors.read_text(errors="replace"))
        if starting and group:  # a child of make got the signal before Python had run any of our code
            label += f" (mlir-offload {', '.join(map(str, starting))} in Python's start-up)"
            return [("startup", f"{label}: {problem}") for problem in problems]
        return [(problem.split(":")[0].split(" ")[0], f"{label}: {problem}") for problem in problems]

    def _check(
        self, scenario: Scenario, session: int, status: int, signum: int, finished_first: bool, stderr: str
    ) -> list[str]:
        problems = []
        deadline = time.monotonic() + SETTLE_S
        while (left := session_processes(session)) and time.monotonic() < deadline:
            time.sleep(0.05)
        for pid, command in left.items():
            problems.append(f"orphan: {pid} {command[:160]}")
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for entry in sorted(os.listdir(self.tmp)):
            if not scenario.ours and entry.split("-")[0] in scenario.clang_stems:
                print(f"  note: {scenario.name}: clang's own file {entry} (its compile of a .cu source)", flush=True)
            else:
                problems.append(f"litter in TMPDIR: {entry}")
            path = self.tmp / entry
            shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
        for entry in sorted(os.listdir(scenario.folder)):
            if entry.endswith(".tmp") or ".tmp." in entry:
                problems.append(f"litter beside the outputs: {entry}")
                (scenario.folder / entry).unlink()
        complete = True
        for name, expected in scenario.outputs.items():
            path = scenario.folder / name
            if not path.exists():
                complete = False
            elif digest(path) != expected:
                problems.append(f"partial output: {name}")
                complete = False
        lines = [line for line in stderr.splitlines() if line.strip()]
        for word in BAD_WORDS:
            if word in stderr:
                problems.append(f"message: {word}: {' | '.join(lines)[:300]}")
        if scenario.ours:
            if len(lines) > 1:
                problems.append(f"message: {len(lines)} lines: {' | '.join(lines)[:300]}")
            interrupted = status == 128 + signum
            if not (interrupted or (status == 0 and complete and not scenario.endless)):
                problems.append(f"status: exit {status} (finished first: {finished_first}): {' | '.join(lines)[:300]}")
        elif status == 0 and not complete:
            problems.append("status: make exited 0 without its outputs")
        return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--kernels", type=int, default=60, help="kernels of the program the compile rounds build")
    parser.add_argument("--no-make", action="store_true", help="leave out the make -j8 rounds")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="stress-interrupts-"))
    started = time.monotonic()
    problems: list[tuple[str, str]] = []
    try:
        stress = Stress(work, args.kernels, not args.no_make)
        print(
            "stress_interrupts: "
            + ", ".join(f"{s.name} {s.seconds:.1f}s" for s in stress.scenarios)
            + f"; {args.rounds} rounds, seed {args.seed}",
            flush=True,
        )
        for index in range(args.rounds):
            found = stress.round(rng)
            for _, problem in found:
                print(f"round {index}: {problem}", flush=True)
            problems += found
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    counts: dict[str, int] = {}
    for kind, _ in problems:
        counts[kind] = counts.get(kind, 0) + 1
    print(
        f"rounds {args.rounds}, problems {len(problems)}"
        + "".join(f", {kind} {count}" for kind, count in sorted(counts.items()))
        + f", seconds {time.monotonic() - started:.1f}"
    )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
