"""The gpu dialect's sparse library operations (offload/host/sparse_runtime.py): programs of host
operations only are bundles; the bundle's record names cusparse and link adds -lcusparse only then; the
executables call cuSPARSE as upstream's wrappers do (checked on the fake cuSPARSE of tests/fake_runtime,
which logs each call); a failing library call is one line and exit 1. Their results are checked under
emulation by tests/data/emulate/sparse_*.mlir (test_emulate_programs.py)."""

from __future__ import annotations

import json
import os
import struct
import tarfile

import pytest

from conftest import REPO, require_tool, run_cli
from ship_archive import run_make, scrubbed_env, unpack

PROGRAMS = REPO / "tests" / "data" / "emulate"
SPMV_CSR = PROGRAMS / "sparse_spmv_csr.mlir"  # async, f32, CSR, SpMV, host operations only
SPMM_COO = PROGRAMS / "sparse_spmm_coo.mlir"  # synchronous, f64, COO (index coordinates), SpMM transposed, SpMV
STRUCTURED = PROGRAMS / "sparse_2to4_spmm.mlir"  # cuSPARSELt: 2:4 SpMM, f16, pruned and checked
WITHOUT_SPARSE = PROGRAMS / "async_copy.mlir"
CSC_SDDMM = PROGRAMS / "sparse_csc_sddmm.mlir"  # synchronous CSC SpMV (f64), then async SDDMM (f32)
SPARSIFIER = PROGRAMS / "sparse_sparsifier_libgen.mlir"  # upstream's sparsifier with gpu-triple, as written

CUDA_R_32F, CUDA_R_64F = 0, 1
CUSPARSE_INDEX_32I, CUSPARSE_INDEX_64I = 2, 3
CUSPARSE_ORDER_ROW = 2
CUSPARSE_OPERATION_TRANSPOSE = 1


def compiled(tmp_path, program, *options) -> str:
    bundle = tmp_path / f"{program.stem}.o"
    done = run_cli("compile", str(program), "--offload-arch", "sm_80", *options, "-o", str(bundle))
    assert done.returncode == 0, done.stderr
    return str(bundle)


def linked(tmp_path, bundle: str, fake_cuda, *options) -> str:
    exe = tmp_path / "app"
    done = run_cli("link", bundle, f"-L{fake_cuda.lib_dir}", *options, "-o", str(exe))
    assert done.returncode == 0, done.stderr
    return str(exe)


def link_words(bundle: str) -> list[str]:
    done = run_cli("link", bundle, "--dry-run", "-o", "app")
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


@pytest.fixture(scope="module")
def spmv_bundle(tmp_path_factory) -> str:
    return compiled(tmp_path_factory.mktemp("spmv"), SPMV_CSR)


def test_the_record_names_cusparse_and_link_adds_it_before_the_runtime(spmv_bundle, tmp_path):
    inspected = run_cli("inspect", spmv_bundle)
    assert "mlir-offload.libraries=cusparse" in inspected.stdout
    words = link_words(spmv_bundle)
    assert words.index("-lcusparse") < words.index("-lcudart")
    plain = link_words(compiled(tmp_path, WITHOUT_SPARSE))
    assert "-lcudart" in plain and "-lcusparse" not in plain


def test_host_only_spmv_calls_cusparse_on_its_stream(spmv_bundle, tmp_path, fake_cuda):
    exe = linked(tmp_path, spmv_bundle, fake_cuda)
    verified = run_cli("verify", exe)
    assert verified.returncode == 0, verified.stderr
    assert "calls libcusparse: 10 function(s)" in verified.stdout
    assert "no kernels: the program's GPU work is host operations" in verified.stdout
    result = fake_cuda.run(exe)
    assert result.returncode == 0, result.stderr
    assert result.kernels_registered() == []
    sparse = [api for api in result.apis() if api.startswith("cusparse")]
    assert sparse == [
        "cusparseCreateCsr",
        "cusparseCreateDnVec",
        "cusparseCreateDnVec",
        "cusparseCreate",
        "cusparseSetStream",
        "cusparseSpMV_bufferSize",
        "cusparseSetStream",
        "cusparseSpMV",
        "cusparseDestroySpMat",
        "cusparseDestroyDnVec",
        "cusparseDestroyDnVec",
        "cusparseDestroy",
    ]
    (csr,) = result.calls("cusparseCreateCsr")
    assert (csr["rows"], csr["cols"], csr["nnz"]) == (3, 4, 5)
    assert (csr["offset_type"], csr["index_type"], csr["base"], csr["type"]) == (
        CUSPARSE_INDEX_32I,
        CUSPARSE_INDEX_32I,
        0,
        CUDA_R_32F,
    )
    assert [v["size"] for v in result.calls("cusparseCreateDnVec")] == [4, 3]
    (spmv,) = result.calls("cusparseSpMV")
    assert (spmv["op_a"], spmv["alpha"], spmv["beta"], spmv["compute_type"]) == (0, 1, 1, CUDA_R_32F)
    # One token chain: one stream (not the default one), which the library is set to before each call.
    assert len(result.calls("cudaStreamCreate")) == 1
    streams = {call["stream"] for call in result.calls("cusparseSetStream")}
    assert len(streams) == 1 and 0 not in streams
    assert len({call["handle"] for call in result.calls("cusparseCreate") + result.calls("cusparseDestroy")}) == 1
    # The fake's buffer size (256 bytes) is what the program allocates.
    assert 256 in [call["size"] for call in result.calls("cudaMalloc")]


def test_synchronous_coo_spmm_transposed_in_f64(tmp_path, fake_cuda):
    result = fake_cuda.run(linked(tmp_path, compiled(tmp_path, SPMM_COO), fake_cuda))
    assert result.returncode == 0, result.stderr
    (coo,) = result.calls("cusparseCreateCoo")
    assert (coo["rows"], coo["cols"], coo["nnz"], coo["index_type"], coo["type"]) == (
        3,
        4,
        5,
        CUSPARSE_INDEX_64I,
        CUDA_R_64F,
    )
    assert [(m["rows"], m["cols"], m["ld"], m["order"]) for m in result.calls("cusparseCreateDnMat")] == [
        (3, 2, 2, CUSPARSE_ORDER_ROW),
        (4, 2, 2, CUSPARSE_ORDER_ROW),
    ]
    (spmm,) = result.calls("cusparseSpMM")
    assert (spmm["op_a"], spmm["op_b"], spmm["alpha"], spmm["beta"], spmm["compute_type"]) == (
        CUSPARSE_OPERATION_TRANSPOSE,
        0,
        1,
        1,
        CUDA_R_64F,
    )
    # SpMM's size query answered 0 bytes: the program allocates 1, as with upstream's wrappers.
    assert 1 in [call["size"] for call in result.calls("cudaMalloc")]
    # The fake's sizes come back through gpu.spmat_get_size into the printed memref.
    assert "[3,  4,  5]" in result.stdout
    streams = {call["stream"] for call in result.calls("cusparseSetStream")}
    assert len(streams) == 1 and None not in streams and 0 not in streams


def test_a_failing_library_call_is_one_line_and_exit_1(spmv_bundle, tmp_path, fake_cuda):
    result = fake_cuda.run(linked(tmp_path, spmv_bundle, fake_cuda), env={"FAKE_RT_FAIL": "cusparseSpMV"})
    assert result.returncode == 1
    assert result.stderr == "cusparseSpMV: invalid value\n"
    assert "cusparseDestroySpMat" not in result.apis()


def test_unsupported_sparse_op_is_refused_at_the_op(tmp_path):
    source = tmp_path / "aos.mlir"
    source.write_text("""module {
  func.func @coo(%i: memref<?xindex>, %v: memref<?xf32>, %n: index) {
    %t0 = gpu.wait async
    %a, %t1 = gpu.create_coo_aos async [%t0] %n, %n, %n, %i, %v : memref<?xindex>, memref<?xf32>
    gpu.wait [%t1]
    return
  }
}
""")
    out = tmp_path / "aos.o"
    done = run_cli("compile", str(source), "--offload-arch", "sm_80", "-o", str(out))
    assert done.returncode == 1 and not out.exists()
    assert done.stderr.startswith(f"{source}:4:15: error: 'gpu.create_coo_aos': cuSPARSE 12 removed")
    assert done.stderr.count("\n") == 1


def test_on_hip_the_same_calls_go_to_hipsparse(tmp_path, fake_hip):
    bundle = tmp_path / "spmv.o"
    done = run_cli("compile", str(SPMV_CSR), "--offload-arch", "gfx90a", "-o", str(bundle))
    assert done.returncode == 0, done.stderr
    words = link_words(str(bundle))
    assert words.index("-lhipsparse") < words.index("-lamdhip64") and "-lcusparse" not in words
    exe = tmp_path / "app"
    done = run_cli("link", str(bundle), f"-L{fake_hip.lib_dir}", "-o", str(exe))
    assert done.returncode == 0, done.stderr
    result = fake_hip.run(exe)
    assert result.returncode == 0, result.stderr
    assert [api for api in result.apis() if "sparse" in api] == [
        "hipsparseCreateCsr",
        "hipsparseCreateDnVec",
        "hipsparseCreateDnVec",
        "hipsparseCreate",
        "hipsparseSetStream",
        "hipsparseSpMV_bufferSize",
        "hipsparseSetStream",
        "hipsparseSpMV",
        "hipsparseDestroySpMat",
        "hipsparseDestroyDnVec",
        "hipsparseDestroyDnVec",
        "hipsparseDestroy",
    ]
    (spmv,) = result.calls("hipsparseSpMV")
    assert (spmv["alpha"], spmv["beta"], spmv["compute_type"]) == (1, 1, CUDA_R_32F)  # HIP_R_32F is 0 too
    failed = fake_hip.run(exe, env={"FAKE_RT_FAIL": "hipsparseSpMV"})
    assert (failed.returncode, failed.stderr) == (1, "hipsparseSpMV: invalid value\n")


def test_a_program_without_any_gpu_operation_is_still_refused(tmp_path):
    source = tmp_path / "plain.mlir"
    source.write_text("module {\n  func.func @main() {\n    return\n  }\n}\n")
    done = run_cli("compile", str(source), "--offload-arch", "sm_80", "-o", str(tmp_path / "plain.o"))
    assert done.returncode == 1
    assert "nothing to compile for the device" in done.stderr


@pytest.mark.parametrize("major", [19, 22])
def test_host_only_bundle_links_with_each_clang(tmp_path, fake_cuda, major):
    clang = require_tool(f"clang-{major}", major)
    bundle = compiled(tmp_path, SPMV_CSR, "--target-clang", str(major))
    exe = linked(tmp_path, bundle, fake_cuda, "--clang", clang)
    result = fake_cuda.run(exe)
    assert result.returncode == 0, result.stderr
    assert len(result.calls("cusparseSpMV")) == 1 and result.fatbins()


def test_alpha_and_beta_are_one_in_each_compute_type():
    """The shims' table of 1 by data type, read as each type's bytes."""
    from offload.host.sparse_runtime import CUSPARSE

    def one_as(data_type: int, fmt: str) -> float:
        raw = CUSPARSE.one_by_data_type[data_type].to_bytes(8, "little")
        return struct.unpack_from(fmt, raw)[0]

    assert one_as(0, "<f") == 1.0 and one_as(1, "<d") == 1.0 and one_as(4, "<f") == 1.0 and one_as(5, "<d") == 1.0
    assert one_as(2, "<e") == 1.0 and one_as(10, "<i") == 1
    assert struct.unpack("<f", (CUSPARSE.one_by_data_type[14] << 16).to_bytes(4, "little"))[0] == 1.0  # bf16


def test_shipped_archive_links_the_library_on_the_target(tmp_path, fake_cuda):
    require_tool("clang-22", 22)
    archive = tmp_path / "spmv.tar.gz"
    done = run_cli("ship", str(SPMV_CSR), "--offload-arch", "sm_80", "-o", str(archive))
    assert done.returncode == 0, done.stderr
    top = unpack(archive, tmp_path / "target")
    manifest = json.loads((top / "manifest.json").read_text())
    assert manifest["libraries"] == ["cusparse"]
    link_line = next(
        line
        for line in (top / "build.sh").read_text().splitlines()
        if '"$CLANG" --offload-new-driver' in line and "-lcudart" in line
    )
    assert link_line.index("-lcusparse") < link_line.index("-lcudart")
    made = run_make(top, scrubbed_env(tmp_path), "CLANG=clang-22", f"LDFLAGS=-L{fake_cuda.lib_dir}")
    assert made.returncode == 0, made.stderr
    assert "0 kernel entries" in made.stdout and not (tmp_path / "python-was-run").exists()
    result = fake_cuda.run(top / "spmv")
    assert result.returncode == 0 and len(result.calls("cusparseSpMV")) == 1


def test_doctor_names_the_library_and_checks_the_toolkit_has_it(tmp_path):
    require_tool("clang-22", 22)
    archive = tmp_path / "spmv.tar.gz"
    assert run_cli("ship", str(SPMV_CSR), "--offload-arch", "sm_80", "-o", str(archive)).returncode == 0
    done = run_cli("doctor", "--bundle", str(archive), "--cuda-path", "/usr/local/cuda")
    assert "libraries cusparse" in done.stdout
    folder = "/usr/local/cuda/lib64"
    has_library = os.path.isdir(folder) and any(name.startswith("libcusparse.so") for name in os.listdir(folder))
    missing = "the bundle calls libcusparse, which is not in"
    assert (missing in done.stdout) == (not has_library)


def test_a_manifest_naming_an_option_as_library_is_refused(tmp_path):
    archive = tmp_path / "spmv.tar.gz"
    assert run_cli("ship", str(SPMV_CSR), "--offload-arch", "sm_80", "-o", str(archive)).returncode == 0
    top = unpack(archive, tmp_path / "unpacked")
    manifest = json.loads((top / "manifest.json").read_text())
    manifest["libraries"] = ["-Wl,--evil"]
    (top / "manifest.json").write_text(json.dumps(manifest))
    done = run_cli("doctor", "--bundle", str(top))
    assert done.returncode == 1
    assert "field 'libraries' is not a list of library names" in done.stderr and done.stderr.count("\n") == 1
    with tarfile.open(archive) as tar:
        assert "spmv/manifest.json" in tar.getnames()


def test_2to4_spmm_calls_cusparselt_as_upstream_does(tmp_path, fake_cuda):
    bundle = compiled(tmp_path, STRUCTURED)
    words = link_words(bundle)
    assert "-lcusparseLt" in words and "-lcusparse" not in words
    exe = linked(tmp_path, bundle, fake_cuda)
    assert "calls libcusparseLt: 17 function(s)" in run_cli("verify", exe).stdout
    result = fake_cuda.run(exe)
    assert result.returncode == 0, result.stderr
    assert [api for api in result.apis() if api.startswith("cusparseLt")] == [
        "cusparseLtInit",
        "cusparseLtStructuredDescriptorInit",
        "cusparseLtDenseDescriptorInit",
        "cusparseLtDenseDescriptorInit",
        "cusparseLtMatmulDescriptorInit",
        "cusparseLtMatmulAlgSelectionInit",
        "cusparseLtMatmulPlanInit",
        "cusparseLtMatmulGetWorkspace",
        "cusparseLtSpMMACompressedSize",
        "cusparseLtSpMMAPrune",
        "cusparseLtSpMMAPruneCheck",
        "cusparseLtSpMMACompress",
        "cusparseLtMatmul",
        "cusparseLtMatDescriptorDestroy",
        "cusparseLtMatmulPlanDestroy",
        "cusparseLtMatmulAlgSelectionDestroy",
        "cusparseLtMatDescriptorDestroy",
        "cusparseLtMatDescriptorDestroy",
        "cusparseLtDestroy",
    ]
    matrices = result.calls("cusparseLtStructuredDescriptorInit") + result.calls("cusparseLtDenseDescriptorInit")
    assert {(m["rows"], m["cols"], m["ld"], m["alignment"], m["type"], m["order"]) for m in matrices} == {
        (32, 32, 32, 16, 2, CUSPARSE_ORDER_ROW)  # CUDA_R_16F, row-major
    }
    (matmul,) = result.calls("cusparseLtMatmulDescriptorInit")
    assert matmul["compute"] == 1  # MLIR's f16 (0) is cuSPARSELt 0.10's CUSPARSE_COMPUTE_16F
    (prune,) = result.calls("cusparseLtSpMMAPrune")
    assert (prune["in_place"], prune["algorithm"]) == (1, 1) and prune["stream"] != 0  # STRIP, on the stream
    (product,) = result.calls("cusparseLtMatmul")
    assert (product["alpha"], product["beta"], product["c_is_d"], product["streams"]) == (1, 1, 1, 1)
    # After A, B and C: the prune check's flag (4 bytes, freed), then the sizes asked for (4096-byte workspace,
    # 1024 compressed, 0 -> 1), which the program allocates as f16 elements (upstream's memref<?xf16> buffers).
    assert [c["size"] for c in result.calls("cudaMalloc")][3:7] == [4, 8192, 2048, 2]
    # The check's flag is zeroed on the stream before the check writes it (else a flag left unwritten reads garbage).
    apis = [name for name in result.apis() if name in ("cudaMemsetAsync", "cusparseLtSpMMAPruneCheck")]
    assert apis == ["cudaMemsetAsync", "cusparseLtSpMMAPruneCheck"], apis
    warned = fake_cuda.run(exe, env={"FAKE_LT_NOT_2TO4": "1"})
    assert warned.returncode == 0 and "the matrix is not 2:4 after pruning" in warned.stderr
    failed = fake_cuda.run(exe, env={"FAKE_RT_FAIL": "cusparseLtMatmul"})
    assert (failed.returncode, failed.stderr) == (1, "cusparseLtMatmul: invalid value\n")


def test_2to4_on_hip_is_refused_at_the_op(tmp_path):
    out = tmp_path / "hip.o"
    done = run_cli("compile", str(STRUCTURED), "--offload-arch", "gfx90a", "-o", str(out))
    assert done.returncode == 1 and not out.exists()
    assert done.stderr.startswith(f"{STRUCTURED}:63:16: error: 'gpu.create_2to4_spmat': 2:4 structured sparsity")
    assert done.stderr.count("\n") == 1


def test_the_sparsifiers_own_gpu_lowering_runs_on_the_generated_library_calls(tmp_path, fake_cuda):
    """The sparsifier with enable-gpu-libgen and gpu-triple ends in upstream's GPU lowering: it runs up to
    it, and the gpu dialect's library operations it made (no device code) get mlir-offload's shims."""
    pipeline = next(
        line.split(": ", 1)[1] for line in SPARSIFIER.read_text().splitlines() if line.startswith("// PASS-PIPELINE:")
    )
    bundle = compiled(tmp_path, SPARSIFIER, "--pass-pipeline", pipeline)
    result = fake_cuda.run(linked(tmp_path, bundle, fake_cuda))
    assert result.returncode == 0, result.stderr
    (spmv,) = result.calls("cusparseSpMV")
    (spmm,) = result.calls("cusparseSpMM")
    assert spmv["compute_type"] == spmm["compute_type"] == CUDA_R_64F
    csr = result.calls("cusparseCreateCsr")
    assert [(m["offset_type"], m["index_type"]) for m in csr][:2] == [
        (CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I),
        (CUSPARSE_INDEX_64I, CUSPARSE_INDEX_64I),
    ]
    spgemm = [api for api in result.apis() if api.startswith("cusparseSpGEMM") or api == "cusparseCsrSetPointers"]
    assert spgemm == [
        "cusparseSpGEMM_createDescr",
        "cusparseSpGEMM_workEstimation",
        "cusparseSpGEMM_workEstimation",
        "cusparseSpGEMM_compute",
        "cusparseSpGEMM_compute",
        "cusparseCsrSetPointers",
        "cusparseSpGEMM_copy",
        "cusparseSpGEMM_destroyDescr",
    ]
    assert result.apis().count("cusparseCreate") == result.apis().count("cusparseDestroy") == 1


def test_csc_spmv_then_sddmm_on_two_streams(tmp_path, fake_cuda):
    result = fake_cuda.run(linked(tmp_path, compiled(tmp_path, CSC_SDDMM), fake_cuda))
    assert result.returncode == 0, result.stderr
    (csc,) = result.calls("cusparseCreateCsc")
    assert (csc["rows"], csc["cols"], csc["nnz"], csc["type"]) == (3, 3, 5, CUDA_R_64F)
    (sddmm,) = result.calls("cusparseSDDMM")
    assert (sddmm["op_a"], sddmm["op_b"], sddmm["alpha"], sddmm["beta"], sddmm["compute_type"]) == (0, 0, 1, 1, 0)
    # The synchronous part runs on a stream of its own, the async chain on another; one handle serves both.
    assert len({call["stream"] for call in result.calls("cusparseSetStream")}) == 2
    assert result.apis().count("cusparseCreate") == 1


SPARSE_HOST_AND_A_KERNEL = """#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
module {
  func.func @main() {
    %c1 = arith.constant 1 : index
    %d = arith.constant dense<[[1.0, 0.0], [0.0, 2.0]]> : tensor<2x2xf64>
    %a = sparse_tensor.convert %d : tensor<2x2xf64> to tensor<2x2xf64, #CSR>
    %n = sparse_tensor.number_of_entries %a : tensor<2x2xf64, #CSR>
    vector.print %n : index
    gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1)
               threads(%tx, %ty, %tz) in (%u = %c1, %v = %c1, %w = %c1) {
      gpu.printf "kernel\\n"
      gpu.terminator
    }
    return
  }
}
"""


def test_the_sparsifiers_runtime_library_is_refused_naming_a_function(tmp_path):
    """Without upstream's GPU lowering in the pipeline the sparsifier runs as written: its
    enable-runtime-library=true calls MLIR's sparse tensor runtime; the bundle records the first function and
    a link that does not name libmlir_c_runner_utils is refused in one line naming it (with gpu-triple the
    pipeline stops before the GPU lowering and the runtime-free code runs instead: test_sparsifier_gpu_paths.py)."""
    source = tmp_path / "host.mlir"
    source.write_text(SPARSE_HOST_AND_A_KERNEL)
    pipeline = "builtin.module(sparsifier{enable-runtime-library=%s})"
    out = tmp_path / "rt.o"
    done = run_cli(
        "compile", str(source), "--pass-pipeline", pipeline % "true", "--offload-arch", "sm_80", "-o", str(out)
    )
    assert done.returncode == 0, done.stderr
    exe = tmp_path / "app"
    done = run_cli("link", str(out), "-o", str(exe))
    assert done.returncode == 1 and not exe.exists()
    assert done.stderr == (
        f"{out}: error: the program calls MLIR's sparse tensor runtime ('_mlir_ciface_lexInsertF64': the "
        "sparsifier's enable-runtime-library=true), which mlir-offload does not provide: link your "
        "libmlir_c_runner_utils (-lmlir_c_runner_utils with -L its folder, or the file) or use "
        "enable-runtime-library=false\n"
    )
    done = run_cli(
        "compile", str(source), "--pass-pipeline", pipeline % "false", "--offload-arch", "sm_80", "-o", str(out)
    )
    assert done.returncode == 0, done.stderr
    assert "sparse-tensor-runtime" not in run_cli("inspect", str(out)).stdout


def test_a_run_line_pipeline_ending_in_gpu_to_llvm_gets_the_same_shims(tmp_path, fake_cuda):
    """Upstream's 2:4 programs lower with their RUN line's passes, gpu-to-llvm among them: the mgpu* calls
    it leaves are the program's GPU work."""
    pipeline = (
        "builtin.module(convert-scf-to-cf,convert-cf-to-llvm,convert-vector-to-llvm,convert-arith-to-llvm,"
        "gpu-to-llvm,reconcile-unrealized-casts)"
    )
    bundle = compiled(tmp_path, STRUCTURED, "--pass-pipeline", pipeline)
    result = fake_cuda.run(linked(tmp_path, bundle, fake_cuda))
    # main is an llvm.func by then: it gets the same int main wrapper (exit status 0, not a stray register)
    assert result.returncode == 0, result.stderr
    assert len(result.calls("cusparseLtMatmul")) == 1 and len(result.calls("cudaStreamCreate")) == 1
