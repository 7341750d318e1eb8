"""`mlir-offload compile`: the bundle's structure read back with llvmlite (entries per profile, embedded
object, stubs, runtime shims), determinism, and one-line errors without partial output."""

from __future__ import annotations

import pytest

from conftest import REPO, run_cli

SAXPY = REPO / "examples" / "saxpy.mlir"


@pytest.fixture(scope="module")
def saxpy_bundle(tmp_path_factory):
    out = tmp_path_factory.mktemp("saxpy") / "saxpy.offload.bc"
    done = run_cli("compile", str(SAXPY), "--offload-arch", "sm_80,sm_90", "--no-cache", "-o", str(out))
    assert done.returncode == 0, done.stderr
    return out


def parse(path):
    import llvmlite.binding as llvm

    # A context of its own: struct names another in-process compile created would get a suffix.
    return llvm.parse_bitcode(path.read_bytes(), context=llvm.create_context())


def test_bundle_has_clang22_entries_embedded_object_and_record(saxpy_bundle):
    from offload.packager import ImageKind
    from offload.packager.bundle import read_bundle_record

    module = parse(saxpy_bundle)
    entry = module.get_global_variable(".offloading.entry.saxpy")
    assert entry.linkage.name == "weak_any"
    assert str(entry.global_value_type) == (
        "%struct.__tgt_offload_entry = type { i64, i16, i16, i32, ptr, ptr, i64, i64, ptr }"
    )
    packing = module.get_function("__mlir_offload_pack.0")  # what main's launch of saxpy calls, with its entry
    assert not packing.is_declaration and len(list(packing.arguments)) == 1 + 8 + 12  # config + f32, 2 memrefs, index
    clang_stub = module.get_function("__device_stub__saxpy")  # what a .cu file's saxpy<<<...>>>(...) calls
    assert not clang_stub.is_declaration and len(list(clang_stub.arguments)) == 12
    assert module.get_function("__cudaPopCallConfiguration").is_declaration
    assert module.get_function("cudaLaunchKernel").is_declaration
    for shim in ("mgpuMemAlloc", "mgpuMemcpy", "mgpuStreamCreate"):
        assert module.get_function(shim).linkage.name == "internal"
    record, images = read_bundle_record(saxpy_bundle.read_bytes(), str(saxpy_bundle))
    assert (record.profile, record.host_format, record.targets) == (22, "bc", ("cuda:sm_80", "cuda:sm_90"))
    assert [(i.image_kind, i.offload_kind, i.strings["arch"]) for i in images] == [
        (ImageKind.BITCODE, 2, "sm_80"),
        (ImageKind.BITCODE, 2, "sm_90"),
    ]


def test_compile_is_deterministic(saxpy_bundle, tmp_path):
    again = tmp_path / "again.bc"
    done = run_cli("compile", str(SAXPY), "--offload-arch", "sm_80,sm_90", "--no-cache", "-o", str(again))
    assert done.returncode == 0, done.stderr  # built again, not taken from a cache
    assert again.read_bytes() == saxpy_bundle.read_bytes()


def test_textual_output_and_legacy_entries(tmp_path):
    text = tmp_path / "saxpy.ll"
    done = run_cli("compile", str(SAXPY), "--offload-arch", "sm_80", "-S", "-o", str(text))
    assert done.returncode == 0, done.stderr
    import llvmlite.binding as llvm

    module = llvm.parse_assembly(text.read_text())
    assert module.get_global_variable(".offloading.entry.saxpy").linkage.name == "weak_any"
    obj = tmp_path / "saxpy19.o"
    done = run_cli("compile", str(SAXPY), "--offload-arch", "sm_80", "--target-clang", "19", "-o", str(obj))
    assert done.returncode == 0, done.stderr
    assert obj.read_bytes()[:4] == b"\x7fELF"
    from offload.packager.bundle import read_bundle_record

    record, images = read_bundle_record(obj.read_bytes(), str(obj))
    assert (record.profile, record.host_format) == (19, "obj") and images[0].image_kind == 3  # cubin
    from offload.toolchain.executable import read_elf

    elf = read_elf(obj.read_bytes(), str(obj))
    entries = elf.section("cuda_offloading_entries")
    assert entries is not None and entries.size == 32  # one legacy 32-byte entry: saxpy
    assert elf.section("llvm_offload_entries") is None and elf.section(".llvm.offloading") is not None


@pytest.mark.parametrize(
    "args, message",
    [
        (["--offload-arch", "sm_80,gfx90a"], "mixes offload kinds"),
        (["--offload-arch", "sm_80", "--target-clang", "17"], "no profile for target clang 17"),
        (["--offload-arch", "sm_80", "--target-clang", "19"], "name the output .o"),
        (["--offload-arch", "sm_80", "--target-clang", "19", "-S"], "drop -S"),
    ],
)
def test_bad_requests_fail_in_one_line_without_output(tmp_path, args, message):
    out = tmp_path / "out.bc"
    done = run_cli("compile", str(SAXPY), *args, "-o", str(out))
    assert done.returncode == 1
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_kernel_name_collision_is_located(tmp_path):
    source = tmp_path / "twice.mlir"
    source.write_text("""module attributes {gpu.container_module} {
  gpu.module @a { gpu.func @k() kernel { gpu.return } }
  gpu.module @b { gpu.func @k() kernel { gpu.return } }
  func.func @main() {
    %c1 = arith.constant 1 : index
    gpu.launch_func @a::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    gpu.launch_func @b::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    return
  }
}
""")
    done = run_cli("compile", str(source), "--offload-arch", "sm_80", "-o", str(tmp_path / "o.bc"))
    assert done.returncode == 1
    assert "twice.mlir:3:" in done.stderr and "'k'" in done.stderr
    assert not (tmp_path / "o.bc").exists()
