"""SIGINT, SIGTERM and SIGHUP to a command (offload/interrupts.py, docs/outputs-and-errors.md): its children
end with it, its temporary folders go, it exits 128 + N with at most one line and no traceback, and an
interrupt is never swallowed. Each command runs as a user runs it, in a session of its own with a private
TMPDIR, and gets the signal once it is provably mid-way (a child process of its own is running)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conftest import REPO, require_tool
from emulation import require_emulation

sys.path.insert(0, str(REPO / "scripts"))
from stress_interrupts import session_processes  # scripts/ is no package: its folder on the path

WAIT_S = 300.0  # a guard against a hang only: no test asserts on time
# Launches a kernel a billion times: a program that runs until it is stopped.
SPIN = (REPO / "tests" / "data" / "interrupts" / "spin.mlir").read_text()


STARTED: list[Command] = []  # every command a test started, stopped for good at its end (fixture below)


@pytest.fixture(autouse=True)
def stop_what_a_failed_test_left():
    """A test that fails before it interrupts its command must not leave it (and `run`'s program) running."""
    yield
    while STARTED:
        command = STARTED.pop()
        for pid in session_processes(command.process.pid):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            command.process.communicate(timeout=WAIT_S)


class Command:
    """`mlir-offload ARGS` in a session of its own, with a private TMPDIR."""

    def __init__(self, tmp_path: Path, *args: str):
        self.tmpdir = tmp_path / "private-tmp"
        self.tmpdir.mkdir()
        env = {**os.environ, "TMPDIR": str(self.tmpdir), "PYTHONPATH": str(REPO)}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "offload", *args],
            cwd=tmp_path,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        STARTED.append(self)

    def wait_for_child(self, matches) -> str:
        """Wait until one of the command's descendants runs a program (its executable's path, whatever its
        argv[0] says) with a command line that `matches` accepts; that path."""
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            assert self.process.poll() is None, "the command ended before it could be interrupted"
            for pid, command in session_processes(self.process.pid).items():
                try:
                    program = os.readlink(f"/proc/{pid}/exe")
                except OSError:
                    continue
                if pid != self.process.pid and command and matches(program, command):
                    return program
            time.sleep(0.01)
        raise AssertionError("no such child appeared")

    def interrupt(self, signum: int, group: bool = False) -> tuple[int, list[str]]:
        """Send the signal (to the command, or to its whole group as a terminal does); its exit status and
        its standard error's lines."""
        (os.killpg if group else os.kill)(self.process.pid, signum)
        _, stderr = self.process.communicate(timeout=WAIT_S)
        return self.process.returncode, stderr.decode(errors="replace").splitlines()

    def left_running(self) -> dict[int, str]:
        """What is still alive in the command's session once its processes had time to end."""
        deadline = time.monotonic() + 10
        while (left := session_processes(self.process.pid)) and time.monotonic() < deadline:
            time.sleep(0.05)
        for pid in left:
            os.kill(pid, signal.SIGKILL)
        return left

    def litter(self) -> list[str]:
        return sorted(os.listdir(self.tmpdir))


def assert_stopped_cleanly(command: Command, status: int, lines: list[str], signum: int) -> None:
    name = signal.Signals(signum).name
    assert status == 128 + signum, (status, lines)
    assert lines == [f"mlir-offload: error: interrupted by {name}"], lines
    assert command.left_running() == {}
    assert command.litter() == []


def many_kernels(tmp_path: Path, kernels: int = 40) -> Path:
    sys.path.insert(0, str(REPO / "scripts"))
    from bench_e2e import generate_mlir

    program = tmp_path / "many.mlir"
    program.write_text(generate_mlir(kernels))
    return program


def test_sigterm_to_run_emulate_stops_its_program_and_removes_its_folder(tmp_path):
    require_emulation()
    (tmp_path / "spin.mlir").write_text(SPIN)
    command = Command(tmp_path, "run", "spin.mlir", "--offload-arch", "sm_80", "--emulate")
    program = command.wait_for_child(
        lambda program, line: "mlir-offload-run-" in program and program.endswith("/program")
    )
    status, lines = command.interrupt(signal.SIGTERM)  # to run alone, as CI's cancel and subprocess timeouts do
    assert_stopped_cleanly(command, status, lines, signal.SIGTERM)
    assert not Path(program).exists()


def test_ctrl_c_to_run_emulate_is_not_swallowed(tmp_path):
    require_emulation()
    (tmp_path / "spin.mlir").write_text(SPIN)
    command = Command(tmp_path, "run", "spin.mlir", "--offload-arch", "sm_80", "--emulate")
    command.wait_for_child(lambda program, line: program.endswith("/program"))
    status, lines = command.interrupt(signal.SIGINT, group=True)  # a terminal's Ctrl-C: run and its program
    assert_stopped_cleanly(command, status, lines, signal.SIGINT)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_mid_compile_stops_it_and_its_children(tmp_path, signum):
    program = many_kernels(tmp_path)
    command = Command(tmp_path, "compile", str(program), "--offload-arch", "sm_80,sm_90", "--no-cache", "-o", "out.bc")
    # Mid-way: the host lowering's forked child (a python3 like the command) or an LLVM tool is running.
    command.wait_for_child(lambda program, line: True)
    status, lines = command.interrupt(signum)  # to the command alone: its children are its to stop
    assert_stopped_cleanly(command, status, lines, signum)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["many.mlir", "private-tmp"]  # no output, no temporary


def test_ctrl_c_mid_compile_to_the_group(tmp_path):
    program = many_kernels(tmp_path)
    command = Command(tmp_path, "compile", str(program), "--offload-arch", "sm_80,sm_90", "--no-cache", "-o", "out.bc")
    command.wait_for_child(lambda program, line: True)
    status, lines = command.interrupt(signal.SIGINT, group=True)  # the forked children get it too
    assert_stopped_cleanly(command, status, lines, signal.SIGINT)
    assert not (tmp_path / "out.bc").exists()


def test_sigterm_mid_link_emulate_leaves_no_temporary(tmp_path):
    require_emulation()
    shutil.copy(REPO / "examples" / "saxpy.mlir", tmp_path)
    bundle = tmp_path / "saxpy.offload.bc"
    done = subprocess.run(
        [sys.executable, "-m", "offload", "compile", "saxpy.mlir", "--offload-arch", "sm_80", "-o", str(bundle)],
        cwd=tmp_path,
        capture_output=True,
    )
    assert done.returncode == 0, done.stderr
    command = Command(tmp_path, "link", "--emulate", str(bundle), "-o", "app")
    command.wait_for_child(lambda program, line: any(tool in program for tool in ("opt", "clang")))
    status, lines = command.interrupt(signal.SIGTERM)
    assert_stopped_cleanly(command, status, lines, signal.SIGTERM)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["private-tmp", "saxpy.mlir", "saxpy.offload.bc"]


def test_sighup_mid_gpu_link_leaves_no_temporary(tmp_path):
    require_tool("clang-22", 22)
    require_tool("ptxas")
    shutil.copy(REPO / "examples" / "saxpy.mlir", tmp_path)
    bundle = tmp_path / "saxpy.offload.bc"
    done = subprocess.run(
        [sys.executable, "-m", "offload", "compile", "saxpy.mlir", "--offload-arch", "sm_80", "-o", str(bundle)],
        cwd=tmp_path,
        capture_output=True,
    )
    assert done.returncode == 0, done.stderr
    command = Command(tmp_path, "link", str(bundle), "-o", "app")
    command.wait_for_child(lambda program, line: "clang" in program)
    status, lines = command.interrupt(signal.SIGHUP)
    assert_stopped_cleanly(command, status, lines, signal.SIGHUP)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["private-tmp", "saxpy.mlir", "saxpy.offload.bc"]


def test_sigterm_to_ship_stops_its_compile(tmp_path):
    program = many_kernels(tmp_path)
    command = Command(tmp_path, "ship", str(program), "--offload-arch", "sm_80", "-o", "app.tar.gz")
    command.wait_for_child(lambda program, line: " -m offload compile " in line)  # ship's own compile
    status, lines = command.interrupt(signal.SIGTERM)
    assert_stopped_cleanly(command, status, lines, signal.SIGTERM)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["many.mlir", "private-tmp"]


def test_an_interrupt_inside_a_finalizer_is_not_swallowed(tmp_path):
    # Python ignores an exception raised in a finalizer (llvmlite's, logging's): printed "Exception
    # ignored ... KeyboardInterrupt" and went on. The signal comes here while __del__ runs.
    script = textwrap.dedent(
        """
        import os, signal, time
        from offload.cli import run

        class Finalized:
            def __del__(self):
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0.2)

        def work():
            Finalized()
            for _ in range(500):
                time.sleep(0.01)
            print("went on")

        import offload.cli
        offload.cli.main = lambda argv=None: work()  # a command whose finalizer gets the interrupt
        run()
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True
    )
    assert done.returncode == 130, done
    assert done.stdout == ""
    assert done.stderr.splitlines() == ["mlir-offload: error: interrupted by SIGINT"], done.stderr


def test_a_signal_ignored_at_start_stays_ignored(tmp_path):
    # nohup (SIGHUP ignored): the command goes on, as every well-behaved tool does.
    script = (
        "import signal\nfrom offload import interrupts\ninterrupts.install()\n"
        "print(signal.getsignal(signal.SIGHUP) is signal.SIG_IGN)"
    )
    done = subprocess.run(
        ["nohup", sys.executable, "-c", script],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"


def test_link_emulate_on_a_full_disk_names_the_cause(tmp_path):
    require_emulation()
    unshare = shutil.which("unshare")
    if unshare is None or subprocess.run([unshare, "-rm", "true"], capture_output=True).returncode != 0:
        pytest.skip("needs unshare -rm (a mount namespace) to mount a small tmpfs")
    shutil.copy(REPO / "examples" / "saxpy.mlir", tmp_path)
    bundle = tmp_path / "saxpy.offload.bc"
    done = subprocess.run(
        [sys.executable, "-m", "offload", "compile", "saxpy.mlir", "--offload-arch", "sm_80", "-o", str(bundle)],
        cwd=tmp_path,
        capture_output=True,
    )
    assert done.returncode == 0, done.stderr
    full = tmp_path / "full"
    full.mkdir()
    # A 256 KiB file system filled up: the executable (over 100 KiB) cannot be written.
    script = (
        f"mount -t tmpfs -o size=256k tmpfs {full} && (head -c 1048576 /dev/zero > {full}/filler 2>/dev/null; true) && "
        f"{sys.executable} -m offload link --emulate {bundle} -o {full}/app; echo status=$?; ls -a {full}"
    )
    linked = subprocess.run(
        [unshare, "-rm", "sh", "-c", script],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
    )
    lines = linked.stderr.splitlines()
    assert len(lines) == 1 and "No space left on device" in lines[0], linked.stderr
    assert lines[0].startswith("mlir-offload: error: --emulate: linking"), lines
    assert "status=1" in linked.stdout
    assert linked.stdout.split()[1:] == [".", "..", "filler"]  # no temporary output left beside
