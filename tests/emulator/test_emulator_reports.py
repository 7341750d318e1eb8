"""What the emulator refuses and reports: device code it cannot run is refused at compile time with one
located line; out-of-bounds accesses and divergent barriers are reported with kernel, block and thread
(as compute-sanitizer does); `run` passes the program's output and status through."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from conftest import REPO, run_cli
from emulation import require_emulation

FAULTS = REPO / "tests" / "data" / "emulator" / "faults.mlir"
SAXPY = REPO / "examples" / "saxpy.mlir"

INLINE_ASM = """\
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%out: memref<?xi32>) kernel {
      %c0 = arith.constant 0 : index
      %v = llvm.inline_asm "mov.u32 $0, 7;", "=r" : () -> i32
      memref.store %v, %out[%c0] : memref<?xi32>
      gpu.return
    }
  }
  func.func @main() -> i32 {
    %c1 = arith.constant 1 : index
    %out = gpu.alloc (%c1) : memref<?xi32>
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%out : memref<?xi32>)
    %z = arith.constant 0 : i32
    return %z : i32
  }
}
"""


@pytest.fixture(scope="module", params=["sm_80", "gfx90a"])
def faults(request, tmp_path_factory):
    require_emulation()
    folder = tmp_path_factory.mktemp(f"faults-{request.param}")
    bundle, executable = folder / "faults.offload.bc", folder / "faults"
    done = run_cli("compile", str(FAULTS), "--offload-arch", request.param, "--emulate", "-o", str(bundle))
    assert done.returncode == 0, done.stderr
    done = run_cli("link", str(bundle), "--emulate", "-o", str(executable))
    assert done.returncode == 0, done.stderr

    def run(which: int) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(executable)], env={**os.environ, "FAULT": str(which)}, capture_output=True, text=True, timeout=120
        )

    return run


def test_out_of_bounds_device_buffer_is_reported_with_the_thread(faults):
    done = faults(1)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        line
        for line in done.stderr.splitlines()
        if line.startswith(
            "mlir-offload emulator: error: out-of-bounds access in kernel 'overrun', block (1,0,0), thread (5,0,0): "
        )
        and "0 bytes past the end of a 1024-byte device buffer" in line
    ]
    assert len(done.stderr.splitlines()) == 1


def test_divergent_barrier_is_reported(faults):
    done = faults(2)
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()
    assert line.startswith("mlir-offload emulator: error: barrier divergence in kernel 'early_exit', block (")
    assert "exited while 16 other thread(s) of its block wait at a barrier" in line


def test_out_of_bounds_workgroup_memory_is_reported(faults):
    done = faults(3)
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()
    assert line.startswith(
        "mlir-offload emulator: error: out-of-bounds access in kernel 'shared_overrun', "
        "block (2,0,0), thread (3,0,0): workgroup (shared) memory offset "
    )


def test_inline_assembly_is_refused_at_compile_with_its_location(tmp_path):
    require_emulation()
    source = tmp_path / "asm.mlir"
    source.write_text(INLINE_ASM)
    done = run_cli("compile", str(source), "--offload-arch", "sm_80", "--emulate", "-o", str(tmp_path / "a.bc"))
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"{source}:5:12: error: --emulate: 'llvm.inline_asm' (inline assembly) cannot be emulated on the CPU"
    ]
    assert not (tmp_path / "a.bc").exists()
    # A bundle compiled without --emulate: link --emulate refuses the same assembly in one line.
    done = run_cli("compile", str(source), "--offload-arch", "sm_80", "-o", str(tmp_path / "b.bc"))
    assert done.returncode == 0, done.stderr
    done = run_cli("link", str(tmp_path / "b.bc"), "--emulate", "-o", str(tmp_path / "b"))
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()
    assert line.startswith("mlir-offload: error: --emulate: ") and 'inline assembly "mov.u32 $0, 7;"' in line
    assert not (tmp_path / "b").exists()


TCGEN05 = """\
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k() kernel {
      nvvm.tcgen05.fence #nvvm.tcgen05_fence<before>
      gpu.return
    }
  }
  func.func @main() -> i32 {
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    %z = arith.constant 0 : i32
    return %z : i32
  }
}
"""


def test_blackwell_units_not_emulated_are_refused_at_compile(tmp_path):
    require_emulation()
    source = tmp_path / "tcgen05.mlir"
    source.write_text(TCGEN05)
    done = run_cli("run", str(source), "--offload-arch", "sm_90a", "--emulate")
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"{source}:4:7: error: --emulate: 'nvvm.tcgen05.fence' (Blackwell's tensor core generation 5) "
        "cannot be emulated on the CPU"
    ]


def test_run_passes_output_and_status_through_and_sm70_emulates(tmp_path):
    """sm_70, which CUDA 13 cannot build, still emulates: no toolkit is involved."""
    require_emulation()
    done = run_cli("run", str(SAXPY), "--offload-arch", "sm_70", "--emulate")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "saxpy: ok"
    wrong = tmp_path / "wrong.mlir"
    wrong.write_text(SAXPY.read_text().replace("arith.addf %ax, %yv", "arith.subf %ax, %yv"))
    done = run_cli("run", str(wrong), "--offload-arch", "gfx90a", "--emulate")
    assert done.returncode == 2  # the program's own status
    assert done.stdout.splitlines()[-1] == "saxpy: MISMATCH"


def test_run_refuses_output_options():
    done = run_cli("run", str(SAXPY), "--offload-arch", "sm_80", "--emulate", "-o", "x")
    assert done.returncode == 2
    assert "drop -o" in done.stderr


def test_aarch64_host_under_qemu(tmp_path):
    """Grace Hopper hosts: the runtime's aarch64 context switch, barriers and all, under qemu-aarch64."""
    require_emulation()
    from conftest import require_tool

    qemu = require_tool("qemu-aarch64")
    bundle, app = tmp_path / "block_sum.offload.bc", tmp_path / "block_sum"
    source = REPO / "tests" / "data" / "emulator" / "block_sum.mlir"
    done = run_cli(
        "compile",
        str(source),
        "--offload-arch",
        "sm_80",
        "--emulate",
        "--host-triple",
        "aarch64-linux-gnu",
        "-o",
        str(bundle),
    )
    assert done.returncode == 0, done.stderr
    done = run_cli("link", str(bundle), "--emulate", "--target=aarch64-linux-gnu", "-o", str(app))
    assert done.returncode == 0, done.stderr
    assert app.read_bytes()[0x12] == 183  # EM_AARCH64
    ran = subprocess.run([qemu, "-L", "/usr/aarch64-linux-gnu", str(app)], capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines()[-1] == f"total: {sum(range(2048)):.1f}"


SPIN = """\
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @spin(%flag: memref<?xi32>) kernel {
      %c0 = arith.constant 0 : index
      %zero = arith.constant 0 : i32
      %c1 = arith.constant 1 : index
      %one = arith.constant 1 : i32
      scf.while : () -> () {
        %v = memref.load %flag[%c0] : memref<?xi32>
        %go = arith.cmpi eq, %v, %zero : i32
        scf.condition(%go)
      } do {
        %old = memref.atomic_rmw addi %one, %flag[%c1] : (i32, memref<?xi32>) -> i32
        scf.yield
      }
      gpu.return
    }
  }
  func.func @main() -> i32 {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %flag = gpu.alloc (%c2) : memref<?xi32>
    %zero = arith.constant 0 : i32
    gpu.memset %flag, %zero : memref<?xi32>, i32
    gpu.launch_func @kernels::@spin blocks in (%c4, %c1, %c1) threads in (%c4, %c1, %c1) args(%flag : memref<?xi32>)
    return %zero : i32
  }
}
"""


def test_ctrl_c_stops_a_kernel_that_loops_forever(tmp_path):
    import signal
    import time

    require_emulation()
    source, bundle, app = tmp_path / "spin.mlir", tmp_path / "spin.offload.bc", tmp_path / "spin"
    source.write_text(SPIN)
    assert run_cli("compile", str(source), "--offload-arch", "sm_80", "--emulate", "-o", str(bundle)).returncode == 0
    assert run_cli("link", str(bundle), "--emulate", "-o", str(app)).returncode == 0
    child = subprocess.Popen([str(app)])
    time.sleep(2)
    assert child.poll() is None  # still spinning
    child.send_signal(signal.SIGINT)
    assert child.wait(timeout=30) == -signal.SIGINT


def test_link_dry_run_builds_nothing(tmp_path):
    require_emulation()
    bundle = tmp_path / "saxpy.offload.bc"
    assert run_cli("compile", str(SAXPY), "--offload-arch", "sm_80", "-o", str(bundle)).returncode == 0
    cache = tmp_path / "emulator-cache"
    done = run_cli(
        "link",
        str(bundle),
        "--emulate",
        "--dry-run",
        "-o",
        str(tmp_path / "app"),
        env={**os.environ, "MLIR_OFFLOAD_EMULATOR_CACHE": str(cache)},
    )
    assert done.returncode == 0, done.stderr
    words = done.stdout.split()
    assert words[1] == str(bundle) and words[-2:] == ["-o", str(tmp_path / "app")]
    assert str(cache / "") in done.stdout and "-lpthread" in words  # the runtime object it would build
    assert not cache.exists() and not (tmp_path / "app").exists()


def test_emulated_link_is_deterministic(tmp_path):
    """Same bundle, same flags: byte-identical executables (workgroup memory laid out in module order)."""
    require_emulation()
    source = REPO / "tests" / "data" / "emulator" / "features.mlir"
    bundle = tmp_path / "features.offload.bc"
    assert run_cli("compile", str(source), "--offload-arch", "gfx90a", "--emulate", "-o", str(bundle)).returncode == 0
    for name in ("first", "second"):
        done = run_cli("link", str(bundle), "--emulate", "-o", str(tmp_path / name))
        assert done.returncode == 0, done.stderr
    assert (tmp_path / "first").read_bytes() == (tmp_path / "second").read_bytes()


DEVICE_ASSERT = """\
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @check(%out: memref<?xi32>) kernel {
      %t = gpu.thread_id x
      %c2 = arith.constant 2 : index
      %ok = arith.cmpi ne, %t, %c2 : index
      cf.assert %ok, "thread two is refused"
      %ti = arith.index_cast %t : index to i32
      memref.store %ti, %out[%t] : memref<?xi32>
      gpu.return
    }
  }
  func.func @main() -> i32 {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %out = gpu.alloc (%c4) : memref<?xi32>
    gpu.launch_func @kernels::@check blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%out : memref<?xi32>)
    gpu.wait
    %z = arith.constant 0 : i32
    return %z : i32
  }
}
"""


def test_device_assertion_stops_the_launch_as_cuda_reports_it(tmp_path):
    """CUDA's format for the failing thread, a trap, then the next runtime call's sticky error."""
    require_emulation()
    source = tmp_path / "assert.mlir"
    source.write_text(DEVICE_ASSERT)
    done = run_cli("run", str(source), "--offload-arch", "sm_80", "--emulate")
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    assert len(lines) == 2, done.stderr
    assert lines[0].endswith(": block: [0,0,0], thread: [2,0,0] Assertion `thread two is refused` failed.")
    assert lines[0].startswith(f"{source}:7: check: block:")  # the kernel's name, as CUDA prints it
    assert lines[1].endswith(": device-side assert triggered")


def test_the_first_emulator_build_says_so_on_a_terminal_once(tmp_path):
    """Building the emulator takes seconds to half a minute, once per machine: on a terminal one line says
    so; in a pipe or a log nothing; with the build done, nothing either."""
    require_emulation()
    from conftest import stderr_on_terminal

    program = tmp_path / "saxpy.mlir"
    program.write_text(SAXPY.read_text())
    piped_cache, terminal_cache = tmp_path / "piped", tmp_path / "terminal"
    env = {**os.environ, "MLIR_OFFLOAD_EMULATOR_CACHE": str(piped_cache)}
    done = run_cli("run", str(program), "--emulate", env=env)  # builds everything, piped
    assert done.returncode == 0 and done.stderr == "", done.stderr
    status, stderr = stderr_on_terminal(["run", str(program), "--emulate"], env)  # built already
    assert status == 0 and b"note" not in stderr, stderr
    # A fresh cache holding the pass plugin but not the runtime: the runtime's build, on a terminal.
    shutil.copytree(piped_cache, terminal_cache)
    (runtime,) = terminal_cache.glob("*/runtime.o")
    runtime.unlink()
    env["MLIR_OFFLOAD_EMULATOR_CACHE"] = str(terminal_cache)
    status, stderr = stderr_on_terminal(["run", str(program), "--emulate"], env)
    assert status == 0, stderr
    # The progress line, when one is shown, is erased (\r ESC[K) before the note.
    notes = [line.replace("\x1b[K", "") for line in stderr.decode().splitlines() if "note" in line]
    assert notes == [
        f"mlir-offload: note: building the emulator for this machine's LLVM (once; kept in {terminal_cache})"
    ]
    assert runtime.is_file()
