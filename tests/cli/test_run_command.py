"""`mlir-offload run`: C's main receives the program's arguments (on the GPU build and under emulation), and
`run --emulate` has a default arch, so its error's suggestion, followed, works."""

from __future__ import annotations

import re
import shlex

from conftest import REPO, require_tool, run_cli
from emulation import require_emulation

# func.func @main(%argc: i32, %argv: !llvm.ptr) -> i32: prints its last argument, exits with argc as a kernel
# computed it (the device copies argc into device memory; the host reads it back).
C_MAIN = REPO / "tests" / "data" / "habits" / "c_main_arguments.mlir"
SAXPY = REPO / "examples" / "saxpy.mlir"


def test_c_main_receives_the_arguments_under_emulation():
    require_emulation()
    done = run_cli("run", str(C_MAIN), "--emulate", "--offload-arch", "sm_80", "--", "one", "two words")
    assert done.stdout == "two words\n", done.stderr
    assert done.returncode == 3  # argc: the program's name and two arguments
    done = run_cli("run", str(C_MAIN), "--emulate", "--offload-arch", "gfx90a")
    # argv[0]: the program as named on the command line, not the temporary executable's path
    assert (done.stdout, done.returncode) == (f"{C_MAIN.with_suffix('')}\n", 1)


def test_c_main_receives_the_arguments_in_a_gpu_build(tmp_path, fake_cuda):
    require_tool("clang-22", 22)
    bundle, app = tmp_path / "args.offload.bc", tmp_path / "args"
    done = run_cli("compile", str(C_MAIN), "--offload-arch", "sm_80", "-o", str(bundle))
    assert done.returncode == 0, done.stderr
    done = run_cli("link", str(bundle), "-o", str(app))
    assert done.returncode == 0, done.stderr
    result = fake_cuda.run(app, args=["alpha", "beta"])
    assert result.stdout == "beta\n"
    (launch,) = result.launches()
    assert launch["kernel"] == "put"


WRONG_MAIN = """module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @nothing() kernel {
      gpu.return
    }
  }
  func.func @main(%argc: i64, %argv: !llvm.ptr) -> i32 {
    %zero = arith.constant 0 : i32
    return %zero : i32
  }
}
"""


def test_other_main_signatures_are_refused_naming_c_main(tmp_path):
    source = tmp_path / "bad.mlir"
    source.write_text(WRONG_MAIN)
    done = run_cli("compile", str(source), "--offload-arch", "sm_80", "-o", str(tmp_path / "b.bc"))
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"{source}:7:3: error: 'main' has type (i64, !llvm.ptr) -> i32"), line
    assert "(i32, !llvm.ptr) -> i32 (C's main: argc, argv)" in line
    assert not (tmp_path / "b.bc").exists()


def test_run_emulate_defaults_to_sm_80():
    require_emulation()
    done = run_cli("run", str(SAXPY), "--emulate")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "saxpy: ok"


def test_the_missing_arch_suggestion_works_when_followed(tmp_path):
    require_emulation()
    done = run_cli("compile", str(SAXPY), "-o", str(tmp_path / "s.bc"))
    assert done.returncode == 1
    suggested = re.findall(r"--offload-arch \S+", done.stderr)
    assert suggested, done.stderr
    for suggestion in suggested:
        followed = run_cli("run", str(SAXPY), "--emulate", *shlex.split(suggestion))
        assert followed.returncode == 0, f"{suggestion}: {followed.stderr}"
        assert followed.stdout.splitlines()[-1] == "saxpy: ok"


def test_run_passes_the_exit_status_of_c_main():
    """The exit status is main's return (argc here), as a shell sees it: run adds no status of its own."""
    require_emulation()
    done = run_cli("run", str(C_MAIN), "--emulate", "--", *["x"] * 6)
    assert done.returncode == 7
