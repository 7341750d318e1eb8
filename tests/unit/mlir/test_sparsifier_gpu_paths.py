"""The sparsifier's GPU paths given to --pass-pipeline as upstream's RUN lines write them (gpu-triple,
enable-gpu-libgen or parallelization-strategy=dense-outer-loop): the pipeline runs up to upstream's own GPU
lowering (offload/mlir/upstream_gpu_lowering.py), mlir-offload compiles the kernels the sparsifier made
and lowers the host's GPU operations and what else the sparsifier leaves on the host (memref.realloc,
linalg ops); the results are checked against numpy under emulation."""

from __future__ import annotations

import os
import subprocess

import numpy as np
import pytest

from conftest import REPO, run_cli, stderr_on_terminal
from emulation import emulate
from offload.mlir.upstream_gpu_lowering import cut_at_gpu_lowering, sparsifier_runtime_library
from sparse_programs import ENTRIES, LIBGEN, MLIR_C_RUNNER_UTILS, READS_A_FILE, TRIPLE

PROGRAM = REPO / "tests" / "data" / "sparsifier" / "matvec_and_sparse_result.mlir"
CODEGEN = (
    f"builtin.module(sparsifier{{enable-runtime-library=false parallelization-strategy=dense-outer-loop {TRIPLE}}})"
)


def expected() -> tuple[np.ndarray, np.ndarray, int]:
    """What the program computes, from its own definitions: A (37x29), x, A x + 1, (2A) x, nnz(2A)."""
    i, j = np.meshgrid(np.arange(37), np.arange(29), indexing="ij")
    a = np.where((7 * i + 3 * j) % 5 == 0, i + 2 * j + 1, 0).astype(np.float64)
    x = np.arange(29, dtype=np.float64) - 3
    return a @ x + 1, (2 * a) @ x, int(np.count_nonzero(a))


def printed(stdout: str) -> tuple[np.ndarray, np.ndarray, int]:
    lines = [line for line in stdout.splitlines() if line.strip()]
    vectors = [np.array([float(v) for v in line.strip("() ").split(",")]) for line in lines[:2]]
    return vectors[0], vectors[1], int(lines[2])


def check(stdout: str) -> None:
    y, z, nse = printed(stdout)
    want_y, want_z, want_nse = expected()
    np.testing.assert_array_equal(y, want_y)
    np.testing.assert_array_equal(z, want_z)
    assert nse == want_nse


def test_the_kernel_generating_path_runs_its_kernels(tmp_path):
    done = emulate(PROGRAM, "sm_80", tmp_path, "--pass-pipeline", CODEGEN)
    assert done.returncode == 0, done.stderr
    check(done.stdout)
    # The sparsifier's kernel is in the device image (its gpu.module, compiled by mlir-offload).
    images = tmp_path / "images"
    done = run_cli("extract", str(tmp_path / f"{PROGRAM.stem}.sm_80.offload.bc"), "-o", str(images))
    assert done.returncode == 0, done.stderr
    (image,) = list(images.iterdir())
    assert b"kernel0" in image.read_bytes()


@pytest.mark.parametrize("runtime_library", ["false", "true"])
def test_the_library_path_with_either_runtime_library_setting(tmp_path, runtime_library):
    done = emulate(PROGRAM, "sm_80", tmp_path, "--pass-pipeline", LIBGEN % runtime_library)
    assert done.returncode == 0, done.stderr
    check(done.stdout)
    inspected = run_cli("inspect", str(tmp_path / f"{PROGRAM.stem}.sm_80.offload.bc"))
    assert "mlir-offload.libraries=cusparse" in inspected.stdout


def test_the_note_naming_what_was_replaced_is_on_a_terminal_only(tmp_path):
    out = tmp_path / "p.o"
    args = ["compile", str(PROGRAM), "--offload-arch", "sm_80", "--pass-pipeline", CODEGEN, "-o", str(out)]
    status, text = stderr_on_terminal(args, dict(os.environ))
    assert status == 0, text
    notes = [line for line in text.decode().replace("\r", "\n").splitlines() if "note:" in line]
    assert notes == [
        "mlir-offload: note: --pass-pipeline ran up to upstream's GPU lowering; mlir-offload compiles the device "
        "code and lowers the host's GPU operations instead of: gpu.module(strip-debuginfo,convert-scf-to-cf,"
        "convert-gpu-to-nvvm), nvvm-attach-target, gpu-to-llvm, gpu-module-to-binary"
    ]
    piped = run_cli(*args)
    assert piped.returncode == 0 and piped.stderr == ""


def test_the_cut_keeps_the_passes_before_and_the_host_function_passes_after():
    import mlir.ir as ir
    import mlir.passmanager as passmanager

    with ir.Context():
        expanded = str(passmanager.PassManager.parse(CODEGEN))
        cut = cut_at_gpu_lowering(expanded)
        assert cut is not None and cut.pipeline is not None
        kept = cut.pipeline
        assert "sparse-gpu-codegen" in kept and "func.func(expand-realloc" in kept
        assert "func.func(convert-linalg-to-loops)" in kept
        for gone in ("convert-gpu-to-nvvm", "gpu-to-llvm", "gpu-module-to-binary", "convert-vector-to-llvm"):
            assert gone not in kept
        # gpu-lower-to-nvvm-pipeline starts with device lowering: nothing of it runs.
        whole = cut_at_gpu_lowering(str(passmanager.PassManager.parse("builtin.module(gpu-lower-to-nvvm-pipeline)")))
        assert whole is not None and whole.pipeline is None
        assert whole.replaced[:2] == ["convert-nvgpu-to-nvvm", "convert-nvvm-to-llvm"]
        # No GPU lowering: the pipeline runs as written.
        plain = str(passmanager.PassManager.parse("builtin.module(convert-linalg-to-loops)"))
        assert cut_at_gpu_lowering(plain) is None


def test_the_sparsifiers_runtime_library_setting_is_read_as_written():
    assert sparsifier_runtime_library("builtin.module(sparsifier{gpu-triple=nvptx64-nvidia-cuda})")
    assert sparsifier_runtime_library("builtin.module(sparsifier{enable-runtime-library=true})")
    assert not sparsifier_runtime_library("builtin.module(sparsifier{enable-runtime-library=false})")
    assert not sparsifier_runtime_library("builtin.module(convert-linalg-to-loops)")


def test_a_sparse_tensor_read_from_a_file_links_the_users_runtime_library_or_is_refused(tmp_path):
    """sparse_tensor.new reads its file through MLIR's sparse tensor runtime in either runtime-library
    setting: the bundle records the first function; a link that names the user's libmlir_c_runner_utils
    runs it (checked against numpy), any other link is refused in one line naming the function."""
    source = tmp_path / "reads.mlir"
    source.write_text(READS_A_FILE)
    bundle = tmp_path / "reads.o"
    done = run_cli(
        "compile", str(source), "--offload-arch", "sm_80", "--pass-pipeline", LIBGEN % "false", "-o", str(bundle)
    )
    assert done.returncode == 0, done.stderr
    function = "_mlir_ciface_createCheckedSparseTensorReader"
    assert f"mlir-offload.sparse-tensor-runtime={function}" in run_cli("inspect", str(bundle)).stdout
    refusal = (
        f"error: the program calls MLIR's sparse tensor runtime ('{function}': sparse_tensor.new or "
        "sparse_tensor.out reads or writes a file through it, whatever enable-runtime-library says), which "
        "mlir-offload does not provide: link your libmlir_c_runner_utils (-lmlir_c_runner_utils with -L its "
        "folder, or the file) or build the tensor in the program (sparse_tensor.convert of a constant, "
        "sparse_tensor.assemble)\n"
    )
    exe = tmp_path / "app"
    done = run_cli("link", "--emulate", str(bundle), "-o", str(exe))
    assert (done.returncode, done.stderr) == (1, f"{bundle}: {refusal}") and not exe.exists()
    done = run_cli("run", str(source), "--emulate", "--pass-pipeline", LIBGEN % "false")
    assert (done.returncode, done.stderr, done.stdout) == (1, f"{source}: {refusal}", "")
    if not MLIR_C_RUNNER_UTILS:
        pytest.skip("no libmlir_c_runner_utils (libmlir-22, which scripts/setup installs)")
    library = MLIR_C_RUNNER_UTILS[-1]
    done = run_cli("link", "--emulate", str(bundle), str(library), f"-Wl,-rpath,{library.parent}", "-o", str(exe))
    assert done.returncode == 0, done.stderr
    matrix = tmp_path / "a.mtx"
    lines = ["%%MatrixMarket matrix coordinate real general", f"3 4 {len(ENTRIES)}"]
    matrix.write_text("\n".join(lines + [f"{i} {j} {v}" for i, j, v in ENTRIES]) + "\n")
    ran = subprocess.run(
        [str(exe)], capture_output=True, text=True, timeout=120, env={**os.environ, "TENSOR0": str(matrix)}
    )
    assert ran.returncode == 0, ran.stderr
    a = np.zeros((3, 4))
    for i, j, v in ENTRIES:
        a[i - 1, j - 1] = v
    got = np.array([float(v) for v in ran.stdout.strip().strip("()").split(",")])
    np.testing.assert_allclose(got, a @ np.array([1.0, 2.0, 3.0, 4.0]))
