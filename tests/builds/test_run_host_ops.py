"""compile + link + run on the fake runtimes: examples/all_host_ops.mlir (every host GPU op, four kernels in
two gpu.modules) for sm_80+sm_90 with clang 22 and clang 19, and for gfx90a with clang 22. Each bundle is
compiled and linked once per session; the tests assert the exact registrations, launch configurations and
argument bytes (memref descriptors: pointer, offset, size, stride)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import REPO, dry_run_words, require_tool, run_cli
from fakert import arg_f32, arg_i64, arg_ptr, fatbin_cubins, ptr_value

ALL_OPS = REPO / "examples" / "all_host_ops.mlir"
KERNELS = ["fill", "iota", "scale", "accumulate"]
N = 1000


def compile_and_link(tmp: Path, arch: str, clang: int, link_flags=(), bundle_name="app.offload.bc"):
    bundle, app = tmp / bundle_name, tmp / "app"
    done = run_cli("compile", str(ALL_OPS), "--offload-arch", arch, "--target-clang", str(clang), "-o", str(bundle))
    assert done.returncode == 0, done.stderr
    done = run_cli("link", str(bundle), *link_flags, "-o", str(app), "-v")
    assert done.returncode == 0, done.stderr
    return bundle, app, done.stderr


@pytest.fixture(scope="module")
def cuda22(tmp_path_factory):
    require_tool("clang-22", 22)
    return compile_and_link(tmp_path_factory.mktemp("cuda22"), "sm_80,sm_90", 22)


@pytest.fixture(scope="module")
def cuda19(tmp_path_factory):
    require_tool("clang-19", 19)
    return compile_and_link(tmp_path_factory.mktemp("cuda19"), "sm_80,sm_90", 19, bundle_name="app.offload.o")


@pytest.fixture(scope="module")
def hip22(tmp_path_factory, fake_hip):
    require_tool("clang-22", 22)
    return compile_and_link(tmp_path_factory.mktemp("hip22"), "gfx90a", 22, [f"-L{fake_hip.lib_dir}"])


def memref_1d(args, first: int):
    """(allocated, aligned, offset, size, stride) of a rank-1 memref argument starting at args[first]."""
    a = args[first : first + 5]
    return arg_ptr(a[0]), arg_ptr(a[1]), arg_i64(a[2]), arg_i64(a[3]), arg_i64(a[4])


def check_run(result, api: str):
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert result.kernels_registered() == KERNELS
    launches = result.launches()
    assert [launch["kernel"] for launch in launches] == ["iota", "scale", "accumulate", "fill"]
    for launch in launches:
        assert launch["grid"] == [4, 1, 1] and launch["block"] == [256, 1, 1] and launch["ret"] == 0
    assert [launch["shared_mem"] for launch in launches] == [0, 0, 1024, 0]
    # The async chain runs on one stream; the synchronous iota on a stream of its own.
    iota, scale, accumulate, fill = launches
    assert scale["stream"] == accumulate["stream"] != 0 and fill["stream"] not in (0, scale["stream"])
    x_alloc = [c for c in result.calls(f"{api}Malloc")]
    (managed,) = result.calls(f"{api}MallocManaged")
    x_ptr, y_ptr = ptr_value(x_alloc[0]["ptr"]), ptr_value(x_alloc[1]["ptr"])
    k_ptr = ptr_value(managed["ptr"])
    assert [c["size"] for c in x_alloc] == [4 * N, 4 * N] and managed["size"] == 4 * N
    assert memref_1d(iota["args"], 0) == (k_ptr, k_ptr, 0, N, 1) and arg_i64(iota["args"][5]) == N
    assert memref_1d(scale["args"], 0) == (x_ptr, x_ptr, 0, N, 1)
    assert arg_f32(scale["args"][5]) == 3.0 and arg_i64(scale["args"][6]) == N
    assert memref_1d(accumulate["args"], 0) == (x_ptr, x_ptr, 0, N, 1)
    assert memref_1d(accumulate["args"], 5) == (y_ptr, y_ptr, 0, N, 1)
    assert memref_1d(accumulate["args"], 10) == (k_ptr, k_ptr, 0, N, 1)
    assert arg_f32(fill["args"][5]) == 1.0
    # Every host op reached the runtime.
    apis = set(result.apis())
    for name in (
        "SetDevice",
        "HostRegister",
        "HostUnregister",
        "StreamCreate",
        "StreamSynchronize",
        "StreamDestroy",
        "StreamWaitEvent",
        "EventCreate",
        "EventRecord",
        "EventDestroy",
        "MemsetAsync",
        "MemcpyAsync",
        "Free",
    ):
        assert api + name in apis, name
    # memset of 0 is one byte memset; of 1.0f and 2.0f (bytes differ) a copy of the pattern, of every byte.
    (memset,) = result.calls(f"{api}MemsetAsync")
    assert (ptr_value(memset["dst"]), memset["value"], memset["size"]) == (k_ptr, 0, 4 * N)
    fills = [c for c in result.calls(f"{api}MemcpyAsync") if ptr_value(c["dst"]) in (x_ptr, y_ptr)]
    assert [(ptr_value(c["dst"]), c["size"]) for c in fills] == [(x_ptr, 4 * N), (y_ptr, 4 * N)]
    # The fake runs no kernel: what the host reads back is what the memsets wrote, to the last element.
    assert result.stdout.splitlines() == [
        "x[0] = 1.0",
        "y[0] = 2.0",
        "k[0] = 0",
        "x[999] = 1.0",
        "y[999] = 2.0",
        "k[999] = 0",
    ]
    assert sorted(ptr_value(c["ptr"]) for c in result.calls(f"{api}Free")) == sorted([x_ptr, y_ptr, k_ptr])
    # Nothing of upstream's runtime wrapper library is referenced.
    assert "mgpu" not in result.stderr


def test_cuda_clang22_registers_launches_and_passes_memref_descriptors(cuda22, fake_cuda):
    _bundle, app, link_log = cuda22
    assert "--offload-new-driver" in link_log and "-lcudart" in link_log
    check_run(fake_cuda.run(app), "cuda")


def test_cuda_clang22_fatbin_has_a_cubin_per_arch_with_every_kernel(cuda22):
    assert fatbin_cubins(cuda22[1]) == {"sm_80": set(KERNELS), "sm_90": set(KERNELS)}


def test_cuda_clang19_bundle_is_an_object_with_cubins_and_runs(cuda19, fake_cuda):
    bundle, app, link_log = cuda19
    assert bundle.read_bytes()[:4] == b"\x7fELF"
    assert "clang-19" in link_log and "offload/data/scripts" in link_log  # the CUDA 13 fatbinary wrapper
    objdump = require_tool("llvm-objdump-22", 22)
    listing = subprocess.run([objdump, "--offloading", str(bundle)], capture_output=True, text=True).stdout
    assert listing.count("OFFLOADING IMAGE") == 2 and "cubin" in listing
    check_run(fake_cuda.run(app), "cuda")
    assert fatbin_cubins(app) == {"sm_80": set(KERNELS), "sm_90": set(KERNELS)}


# AMDGPU code objects carry no parameter sizes the fake can read: tell it (memref = 5 x 8 bytes).
HIP_ARG_SIZES = ";".join(
    [
        "iota:" + ",".join(["8"] * 6),
        "scale:" + ",".join(["8"] * 5 + ["4", "8"]),
        "accumulate:" + ",".join(["8"] * 16),
        "fill:" + ",".join(["8"] * 5 + ["4", "8"]),
    ]
)


def test_hip_gfx90a_registers_and_launches(hip22, fake_hip):
    check_run(fake_hip.run(hip22[1], env={"FAKE_RT_ARG_SIZES": HIP_ARG_SIZES}), "hip")
    assert fatbin_cubins(hip22[1]) == {"gfx90a": set(KERNELS)}


def test_runtime_failure_names_the_api_and_the_error(cuda22, fake_cuda):
    result = fake_cuda.run(cuda22[1], env={"FAKE_RT_FAIL": "cudaMallocManaged"})
    assert result.returncode == 1
    assert result.stderr.startswith("cudaMallocManaged: ")
    assert result.calls("cudaLaunchKernel") == []


def test_link_refuses_a_clang19_bundle_with_clang22(cuda19, tmp_path):
    done = run_cli("link", str(cuda19[0]), "--clang", "clang-22", "-o", str(tmp_path / "x"))
    assert done.returncode == 1
    assert "bundle was made for clang 19" in done.stderr and "--target-clang 22" in done.stderr
    assert not (tmp_path / "x").exists()


def test_link_refuses_a_clang22_bundle_with_clang19(cuda22, tmp_path):
    done = run_cli("link", str(cuda22[0]), "--clang", "clang-19", "-o", str(tmp_path / "x"))
    assert done.returncode == 1
    assert "bundle was made for clang 22" in done.stderr and "--target-clang 19" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_link_dry_run_prints_the_clang_command(cuda22, tmp_path):
    done = run_cli("link", str(cuda22[0]), "-L/opt/x/lib", "-lm", "-o", str(tmp_path / "app"), "--dry-run")
    assert done.returncode == 0, done.stderr
    environment, words = dry_run_words(done.stdout)
    assert words[1] == "--offload-new-driver" and "-L/opt/x/lib" in words and "-lm" in words
    # The ptxas wrapper's variables are part of the command (a shell line to paste), where ptxas has threads.
    assert not environment or any(word.startswith("MLIR_OFFLOAD_PTXAS=") for word in environment)
    assert words[-2:] == ["-o", str(tmp_path / "app")]
    assert not (tmp_path / "app").exists()


WIDE_GRID = """
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @narrow(%x: memref<?xf32>) kernel { gpu.return }
    gpu.func @wide(%x: memref<?xf32>) kernel { gpu.return }
  }
  func.func @main() -> i32 {
    %c1 = arith.constant 1 : index
    %wide = arith.constant 4294967296 : index
    %n = arith.constant 16 : index
    %x = gpu.alloc (%n) : memref<?xf32>
    gpu.launch_func @kernels::@narrow blocks in (%c1, %c1, %c1) threads in (%n, %c1, %c1) args(%x : memref<?xf32>)
    gpu.launch_func @kernels::@wide blocks in (%wide, %c1, %c1) threads in (%n, %c1, %c1) args(%x : memref<?xf32>)
    %zero = arith.constant 0 : i32
    return %zero : i32
  }
}
"""


def test_every_launch_goes_through_one_shared_function_that_names_its_kernel(tmp_path, fake_cuda):
    """The launches share one launch function and one packing function per argument list, given the kernel's
    offload entry (the host compile pays for that code once; no function per kernel but clang's stub): a
    dimension over 32 bits still names the kernel launched with it, and nothing is launched past it."""
    import llvmlite.binding as llvm

    require_tool("clang-22", 22)
    source = tmp_path / "wide.mlir"
    source.write_text(WIDE_GRID)
    done = run_cli("compile", str(source), "--offload-arch", "sm_80", "-S", "-o", str(tmp_path / "wide.ll"))
    assert done.returncode == 0, done.stderr
    module = llvm.parse_assembly((tmp_path / "wide.ll").read_text())

    def calls(function) -> list[list[str]]:  # a call's last operand is the called function
        return [[o.name for o in i.operands] for b in function.blocks for i in b.instructions if i.opcode == "call"]

    def callees(function) -> list[str]:
        return [operands[-1] for operands in calls(function)]

    launchers = [f.name for f in module.functions if not f.is_declaration and "cudaLaunchKernel" in callees(f)]
    assert launchers == ["__mlir_offload_launch"]
    # Both kernels take one memref: main calls one packing function for both, with each kernel's entry.
    launches = [operands for operands in calls(module.get_function("main")) if operands[-1] == "__mlir_offload_pack.0"]
    assert [operands[0] for operands in launches] == [".offloading.entry.narrow", ".offloading.entry.wide"]
    assert [f.name for f in module.functions if f.name.startswith("__mlir_offload_stub")] == []
    assert module.get_function("__mlir_offload_pack.0").linkage == llvm.Linkage.internal
    # clang's stubs (what a .cu file's <<<>>> calls): one call each, to one function per argument list that
    # pops the configuration, then packs the same way; -O0 code at link (optnone).
    for kernel in ("narrow", "wide"):
        stub = module.get_function(f"__device_stub__{kernel}")
        ((entry, *arguments, callee),) = calls(stub)
        assert (entry, len(arguments), callee) == (f".offloading.entry.{kernel}", 5, "__mlir_offload_pop.0")
        assert {"noinline", "optnone"} <= set(b" ".join(stub.attributes).decode().split())
    assert callees(module.get_function("__mlir_offload_pop.0")) == [
        "__cudaPopCallConfiguration",
        "__mlir_offload_pack.0",
    ]
    assert callees(module.get_function("__mlir_offload_pack.0")) == ["__mlir_offload_launch"]
    bundle, app = tmp_path / "wide.offload.bc", tmp_path / "wide"
    assert run_cli("compile", str(source), "--offload-arch", "sm_80", "-o", str(bundle)).returncode == 0
    done = run_cli("link", str(bundle), "-o", str(app))
    assert done.returncode == 0, done.stderr
    result = fake_cuda.run(app)
    assert result.returncode == 1
    assert result.stderr == "cudaLaunchKernel: launch dimension of kernel 'wide' does not fit in 32 bits\n"
    assert [launch["kernel"] for launch in result.launches()] == ["narrow"]


REGISTERED_VIEWS = """\
// Host memory registered through views that start inside their buffers (a nonzero offset), 1-D and 2-D.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @touch(%x: memref<16xf32>, %y: memref<4x8xf32>) kernel { gpu.return }
  }
  func.func @main() -> i32 {
    %c1 = arith.constant 1 : index
    %line = memref.alloc() : memref<16xf32>
    %grid = memref.alloc() : memref<4x8xf32>
    %middle = memref.subview %line[4] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1], offset: 4>>
    %rows = memref.subview %grid[2, 0] [2, 8] [1, 1] : memref<4x8xf32> to memref<2x8xf32, strided<[8, 1], offset: 16>>
    %middle_any = memref.cast %middle : memref<8xf32, strided<[1], offset: 4>> to memref<*xf32>
    %rows_any = memref.cast %rows : memref<2x8xf32, strided<[8, 1], offset: 16>> to memref<*xf32>
    gpu.host_register %middle_any : memref<*xf32>
    gpu.host_register %rows_any : memref<*xf32>
    gpu.launch_func @kernels::@touch blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%line : memref<16xf32>, %grid : memref<4x8xf32>)
    gpu.host_unregister %middle_any : memref<*xf32>
    gpu.host_unregister %rows_any : memref<*xf32>
    %zero = arith.constant 0 : i32
    return %zero : i32
  }
}
"""


def test_host_register_of_a_view_with_an_offset_passes_its_first_element(tmp_path, fake_cuda):
    """gpu.host_register registers the view's own bytes: from aligned + offset, size x element size."""
    require_tool("clang-22", 22)
    source = tmp_path / "views.mlir"
    source.write_text(REGISTERED_VIEWS)
    bundle, app = tmp_path / "views.offload.bc", tmp_path / "views"
    assert run_cli("compile", str(source), "--offload-arch", "sm_80", "-o", str(bundle)).returncode == 0
    done = run_cli("link", str(bundle), "-o", str(app))
    assert done.returncode == 0, done.stderr
    result = fake_cuda.run(app)
    assert result.returncode == 0, result.stderr
    (launch,) = result.launches()
    line, grid = arg_ptr(launch["args"][1]), arg_ptr(launch["args"][6])  # the aligned pointers
    registered = [(ptr_value(c["ptr"]), c["size"], c["ret"]) for c in result.calls("cudaHostRegister")]
    assert registered == [(line + 4 * 4, 8 * 4, 0), (grid + 16 * 4, 2 * 8 * 4, 0)]
    unregistered = [(ptr_value(c["ptr"]), c["ret"]) for c in result.calls("cudaHostUnregister")]
    assert unregistered == [(line + 4 * 4, 0), (grid + 16 * 4, 0)]
