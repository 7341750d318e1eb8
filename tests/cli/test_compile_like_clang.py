"""compile fits clang users' habits: --version names mlir-offload, the MLIR bindings and LLVM; -o is
optional (<stem>.offload.bc, <stem>.o for an object, <stem>.offload.ll with -S); -MD/-MMD/-MF/-MT/-MP
as in clang; --offload-arch takes 80, 90a and compute_XX; -v prints the stages, libraries and tools;
every example of `compile --help` works as written."""

from __future__ import annotations

import shlex
import shutil

from conftest import REPO, require_tool, run_cli

SAXPY = REPO / "examples" / "saxpy.mlir"


def test_version_names_bindings_and_llvm():
    done = run_cli("--version")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("mlir-offload ")
    assert lines[1].startswith("MLIR Python bindings: ") and lines[2].startswith("LLVM 22.")


def test_default_output_names(tmp_path):
    shutil.copy(SAXPY, tmp_path / "saxpy.mlir")
    for extra, expected in (
        ((), "saxpy.offload.bc"),
        (("-S",), "saxpy.offload.ll"),
        (("--host-format=obj",), "saxpy.o"),
    ):
        done = run_cli("compile", "saxpy.mlir", "--offload-arch", "sm_80", *extra, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert (tmp_path / expected).is_file(), sorted(p.name for p in tmp_path.iterdir())
    assert (tmp_path / "saxpy.o").read_bytes()[:4] == b"\x7fELF"
    assert (tmp_path / "saxpy.offload.bc").read_bytes()[:2] == b"BC"


def test_dependency_options_as_clang(tmp_path):
    shutil.copy(SAXPY, tmp_path / "saxpy.mlir")
    (tmp_path / "mlir-offload.toml").write_text("opt-level = 2\n")
    config = str(tmp_path / "mlir-offload.toml")
    done = run_cli("compile", "saxpy.mlir", "--offload-arch", "sm_80", "-MD", "-o", "s.bc", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "s.d").read_text() == f"s.bc: saxpy.mlir \\\n  {config}\n"  # no -MP: no empty rules
    done = run_cli(
        "compile",
        "saxpy.mlir",
        "--offload-arch",
        "sm_80",
        "-MMD",
        "-MP",
        "-MF",
        "deps.d",
        "-MT",
        "obj/s.bc",
        "-MT",
        "all",
        "-o",
        "s.bc",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "deps.d").read_text() == f"obj/s.bc all: saxpy.mlir \\\n  {config}\n\n{config}:\n"


def test_offload_arch_spellings_of_cmake_and_nvcc(tmp_path):
    require_tool("ptxas")
    done = run_cli("compile", str(SAXPY), "--offload-arch", "80,90a", "-o", str(tmp_path / "a.bc"))
    assert done.returncode == 0, done.stderr
    listing = run_cli("inspect", str(tmp_path / "a.bc")).stdout
    assert "arch=sm_80" in listing and "arch=sm_90a" in listing
    # compute_80: the PTX the driver JIT-compiles, beside the bundle for link --ptx-beside.
    done = run_cli("compile", str(SAXPY), "--offload-arch", "compute_80", "-o", str(tmp_path / "p.bc"))
    assert done.returncode == 0, done.stderr
    assert ".target sm_80" in (tmp_path / "p.bc.sm_80.ptx").read_text()
    done = run_cli("compile", str(SAXPY), "--offload-arch", "81", "-o", str(tmp_path / "x.bc"))
    assert done.returncode == 1 and "unknown offload architecture '81'" in done.stderr


def test_verbose_prints_stages_libraries_and_tools(tmp_path):
    require_tool("ptxas")
    done = run_cli(
        "compile",
        str(REPO / "tests" / "data" / "device" / "sqrt_div.mlir"),
        "--offload-arch",
        "sm_80",
        "--device-image=cubin",
        "-v",
        "-o",
        str(tmp_path / "s.o"),
        "--host-format=obj",
    )
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    stages = [line.split(":")[1].split()[1] for line in lines if line.startswith("mlir-offload: stage ")]
    # codegen is the device skeleton's last step, on each image the cache did not have (a hit brings its
    # cubin), inside the device stage; the package stage follows the host lowering, whose runtime calls name
    # the libraries the record lists.
    assert stages == ["load", "device", "lower", "package", "annotate", "emit"]
    steps = [line.split(":")[1].split()[1:] for line in lines if line.startswith("mlir-offload: step ")]
    assert steps == [["codegen", "sm_80"]]
    libraries = [line for line in lines if line.startswith("mlir-offload: library ")]
    assert (
        len(libraries) == 1
        and libraries[0].startswith("mlir-offload: library libdevice (sm_80): ")
        and libraries[0].endswith("libdevice.10.bc")
    )  # once: where it is linked, not also where the cache key plans it
    assert any(line.startswith("mlir-offload: running: ") and "ptxas -c -arch=sm_80" in line for line in lines)
    quiet = run_cli("compile", str(SAXPY), "--offload-arch", "sm_80", "-o", str(tmp_path / "q.bc"))
    assert quiet.returncode == 0 and quiet.stderr == ""


def test_help_examples_work(tmp_path):
    require_tool("clang-22", 22)
    require_tool("ptxas")
    help_text = run_cli("compile", "--help").stdout
    examples = [line.split("#")[0].split() for line in help_text.split("Examples:")[1].splitlines() if line.strip()]
    assert len(examples) >= 5 and all(e[0] == "mlir-offload" for e in examples)
    shutil.copy(SAXPY, tmp_path / "saxpy.mlir")
    (tmp_path / "build").mkdir()
    for words in examples:
        done = run_cli(*words[1:], cwd=tmp_path)
        assert done.returncode == 0, f"{shlex.join(words)}: {done.stderr}"
    assert (tmp_path / "saxpy").is_file() and (tmp_path / "saxpy.o.sm_80.ptx").is_file()
    assert (tmp_path / "build" / "saxpy.offload.d").is_file()
