"""One MLIR program (examples/saxpy.mlir), compiled and shipped once per target profile, built on the
"target" by make alone (scrubbed PATH: no Python, no MLIR) with clang 19 (portable: cubin + ELF host
object) and clang 22 (bitcode), CUDA and HIP, and run on the fake runtimes. Also compile's build
options: --portable/--device-image/--host-format, PTX beside the bundle, -MD -MF dependency files.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from conftest import REPO, require_tool, run_cli
from fakert import arg_f32, arg_i64, fatbin_cubins
from ship_archive import run_make, scrubbed_env, unpack

SAXPY = REPO / "examples" / "saxpy.mlir"

# name -> (compile flags given to ship, clang that builds it on the target, runtime)
SHIPS = {
    "cuda19": (["--offload-arch", "sm_80", "--target-clang", "19", "--portable"], "clang-19", "cuda"),
    "cuda22": (["--offload-arch", "sm_80", "--target-clang", "22"], "clang-22", "cuda"),
    "hip22": (["--offload-arch", "gfx90a"], "clang-22", "hip"),
    "hip19": (["--offload-arch", "gfx90a", "--target-clang", "19", "--portable"], "clang-19", "hip"),
}


@pytest.fixture(scope="module")
def shipped(tmp_path_factory):
    work = tmp_path_factory.mktemp("ship-mlir")
    archives = {}
    for name, (flags, _, _) in SHIPS.items():
        out = work / f"{name}.tar.gz"
        result = run_cli("ship", str(SAXPY), *flags, "-o", str(out))
        assert result.returncode == 0, result.stderr
        toolkit = "ROCM_PATH" if SHIPS[name][2] == "hip" else "CUDA_PATH"
        assert f"make -C {name} [CLANG={SHIPS[name][1]}] [{toolkit}=...]" in result.stdout
        archives[name] = out
    return archives


@pytest.fixture(scope="module")
def fake_rocm(tmp_path_factory, fake_hip):
    """A ROCM_PATH whose lib/ holds the fake libamdhip64 (this machine has no HIP runtime)."""
    root = tmp_path_factory.mktemp("rocm")
    (root / "lib").mkdir()
    for entry in fake_hip.lib_dir.iterdir():
        if entry.name.startswith("libamdhip64"):
            (root / "lib" / entry.name).symlink_to(entry.resolve())
    return root


def test_manifests_follow_the_profile(shipped, tmp_path):
    m19 = json.loads((unpack(shipped["cuda19"], tmp_path / "a") / "manifest.json").read_text())
    assert (m19["entry_profile"], m19["host_format"], m19["device_image"], m19["producer_llvm"]) == (
        19,
        "obj",
        "ptx",
        None,
    )
    assert [t["image_kind"] for t in m19["targets"]] == ["cubin"]
    assert "ptx/cuda19.sm_80.ptx" in m19["files"] and "tools/bin/fatbinary" in m19["files"]
    assert m19["flags"] == SHIPS["cuda19"][0] and m19["entries"] == ["saxpy"]
    m22 = json.loads((unpack(shipped["cuda22"], tmp_path / "b") / "manifest.json").read_text())
    assert (m22["entry_profile"], m22["host_format"], m22["device_image"], m22["producer_llvm"]) == (
        22,
        "bc",
        "bitcode",
        22,
    )
    assert not any(name.startswith("ptx/") for name in m22["files"])
    h19 = json.loads((unpack(shipped["hip19"], tmp_path / "c") / "manifest.json").read_text())
    assert [(t["offload_kind"], t["arch"], t["image_kind"]) for t in h19["targets"]] == [("hip", "gfx90a", "object")]
    assert h19["host_format"] == "obj" and not any(name.startswith("ptx/") for name in h19["files"])


def test_ptx_in_the_archive_is_the_images_source(shipped, tmp_path):
    top = unpack(shipped["cuda19"], tmp_path)
    ptx = (top / "ptx" / "cuda19.sm_80.ptx").read_text()
    assert ".target sm_80" in ptx and ".visible .entry saxpy(" in ptx


@pytest.mark.parametrize("name", list(SHIPS))
def test_builds_on_the_target_and_runs(shipped, tmp_path, fake_cuda, fake_rocm, fake_hip, name):
    flags, clang, runtime = SHIPS[name]
    require_tool(clang, int(clang.split("-")[1]))
    top = unpack(shipped[name], tmp_path / "unpacked")
    env = scrubbed_env(tmp_path)
    extra = [f"ROCM_PATH={fake_rocm}"] if runtime == "hip" else []
    result = run_make(top, env, f"CLANG={clang}", "APP=saxpy", *extra)
    assert result.returncode == 0, result.stdout + result.stderr
    assert not (tmp_path / "python-was-run").exists()
    assert "saxpy: built with" in result.stdout and not (top / "saxpy.tmp").exists()

    run = (fake_cuda if runtime == "cuda" else fake_hip).run(top / "saxpy")
    # The fake runs no kernel: y stays 1.0, so the program reports a mismatch (exit 2) after its launch.
    assert run.returncode == 2 and "saxpy: MISMATCH" in run.stdout
    assert run.kernels_registered() == ["saxpy"]
    (launch,) = run.launches()
    assert launch["kernel"] == "saxpy" and launch["grid"] == [4, 1, 1] and launch["block"] == [256, 1, 1]
    if runtime == "cuda":
        # Default memref ABI: a, then (allocated, aligned, offset, size, stride) for x and y, then n.
        args = launch["args"]
        assert len(args) == 12 and arg_f32(args[0]) == 2.0
        assert [arg_i64(args[i]) for i in (3, 4, 5, 8, 9, 10, 11)] == [0, 1024, 1, 0, 1024, 1, 1024]
        assert fatbin_cubins(top / "saxpy") == {"sm_80": {"saxpy"}}
    else:
        (fatbin,) = run.fatbins()
        assert [i["id"] for i in fatbin["images"] if i["size"]] == ["hip-amdgcn-amd-amdhsa--gfx90a"]


# ---- compile's build options ---------------------------------------------------------------------


def _compile(tmp: Path, *args: str, cwd=None):
    return run_cli("compile", *args, cwd=cwd)


def _nvptx_library(path: Path) -> Path:
    """A device bitcode library for --link-bitcode (nvptx, one unused function)."""
    import llvmlite.ir as ir

    module = ir.Module("helpers")
    module.triple = "nvptx64-nvidia-cuda"
    fn = ir.Function(module, ir.FunctionType(ir.FloatType(), [ir.FloatType()]), "helper_twice")
    builder = ir.IRBuilder(fn.append_basic_block())
    builder.ret(builder.fadd(fn.args[0], fn.args[0]))
    import llvmlite.binding as llvm

    path.write_bytes(llvm.parse_assembly(str(module)).as_bitcode())
    return path


def test_dependency_file_lists_input_libraries_and_config(tmp_path):
    project = tmp_path / "proj dir"
    (project / "src").mkdir(parents=True)
    source = project / "src" / "saxpy.mlir"
    source.write_bytes(SAXPY.read_bytes())
    library = _nvptx_library(project / "helpers.bc")
    (project / "mlir-offload.toml").write_text('offload-arch = "sm_80"\nlink-bitcode = ["helpers.bc"]\nopt-level = 2\n')
    result = _compile(
        tmp_path, "src/saxpy.mlir", "-o", "out/saxpy.offload.bc", "-MD", "-MP", "-MF", "out/saxpy.d", cwd=project
    )
    assert result.returncode == 1 and "cannot write" in result.stderr  # out/ does not exist: no partial output
    (project / "out").mkdir()
    result = _compile(
        tmp_path, "src/saxpy.mlir", "-o", "out/saxpy.offload.bc", "-MD", "-MP", "-MF", "out/saxpy.d", cwd=project
    )
    assert result.returncode == 0, result.stderr
    text = (project / "out" / "saxpy.d").read_text()
    escaped_library = str(library).replace(" ", "\\ ")
    escaped_config = str(project / "mlir-offload.toml").replace(" ", "\\ ")
    assert text == (
        f"out/saxpy.offload.bc: src/saxpy.mlir \\\n  {escaped_library} \\\n  {escaped_config}\n"
        f"\n{escaped_library}:\n\n{escaped_config}:\n"
    )
    # -MD alone: the output's name with .d
    result = _compile(tmp_path, "src/saxpy.mlir", "-o", "out/again.offload.bc", "-MD", cwd=project)
    assert result.returncode == 0, result.stderr
    assert (project / "out" / "again.offload.d").read_text().startswith("out/again.offload.bc: src/saxpy.mlir")


def test_portable_compile_writes_cubin_images_object_and_ptx(tmp_path, ptxas):
    out = tmp_path / "app.offload.o"
    args = (
        str(SAXPY),
        "--offload-arch",
        "sm_80,sm_90",
        "--portable",
        "--target-clang",
        "22",
        "--no-cache",
        "-o",
        str(out),
    )
    assert _compile(tmp_path, *args).returncode == 0
    first = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert sorted(first) == ["app.offload.o", "app.offload.o.sm_80.ptx", "app.offload.o.sm_90.ptx"]
    assert first["app.offload.o"][:4] == b"\x7fELF"
    assert b".target sm_90" in first["app.offload.o.sm_90.ptx"]
    from offload.packager import ImageKind, read_offload_images

    images = read_offload_images(first["app.offload.o"], "app.offload.o")
    assert [(i.strings["arch"], i.image_kind) for i in images] == [
        ("sm_80", ImageKind.CUBIN),
        ("sm_90", ImageKind.CUBIN),
    ]
    assert all(i.data[:4] == b"\x7fELF" and struct.unpack_from("<H", i.data, 16)[0] == 1 for i in images)  # ET_REL
    assert _compile(tmp_path, *args).returncode == 0
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == first  # deterministic


def test_finer_flags_override_portable_and_the_profile(tmp_path, ptxas):
    from offload.packager import ImageKind
    from offload.packager.bundle import read_bundle_record

    out = tmp_path / "mixed.offload.o"
    result = _compile(
        tmp_path, str(SAXPY), "--offload-arch", "sm_80", "--portable", "--device-image", "bitcode", "-o", str(out)
    )
    assert result.returncode == 0, result.stderr
    record, images = read_bundle_record(out.read_bytes(), str(out))
    assert record.host_format == "obj" and [i.image_kind for i in images] == [ImageKind.BITCODE]
    assert not list(tmp_path.glob("*.ptx"))
    cubin = tmp_path / "cubin.offload.bc"
    assert (
        _compile(
            tmp_path, str(SAXPY), "--offload-arch", "sm_80", "--device-image", "cubin", "-o", str(cubin)
        ).returncode
        == 0
    )
    record, images = read_bundle_record(cubin.read_bytes(), str(cubin))
    assert record.host_format == "bc" and [i.image_kind for i in images] == [ImageKind.CUBIN]


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--target-clang", "19", "--device-image", "bitcode"], "--device-image=bitcode: clang 19 cannot read LLVM 22"),
        (["--target-clang", "19", "--host-format", "bc"], "--host-format=bc: clang 19 cannot read LLVM 22"),
        (["--host-format", "obj", "-S"], "-S writes LLVM IR text, but --host-format=obj"),
    ],
)
def test_impossible_format_requests_are_refused(tmp_path, flags, message):
    out = tmp_path / "x.o"
    result = _compile(tmp_path, str(SAXPY), "--offload-arch", "sm_80", *flags, "-o", str(out))
    assert result.returncode == 1 and message in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not list(tmp_path.iterdir())


def test_object_bundle_named_bc_and_mf_without_md(tmp_path):
    result = _compile(
        tmp_path, str(SAXPY), "--offload-arch", "sm_80", "--portable", "-o", str(tmp_path / "a.offload.bc")
    )
    assert result.returncode == 1 and "is an ELF object (--host-format=obj or --portable)" in result.stderr
    result = _compile(tmp_path, str(SAXPY), "--offload-arch", "sm_80", "-MF", "x.d", "-o", str(tmp_path / "a.bc"))
    assert result.returncode == 2 and "-MF FILE names the dependency file of -MD" in result.stderr
    assert not list(tmp_path.iterdir())


def test_config_file_sets_portable_and_target_clang(tmp_path, ptxas):
    (tmp_path / "mlir-offload.toml").write_text('offload-arch = "sm_80"\ntarget-clang = 19\nportable = true\n')
    source = tmp_path / "saxpy.mlir"
    source.write_bytes(SAXPY.read_bytes())
    out = tmp_path / "saxpy.offload.o"
    result = run_cli("compile", str(source), "-o", str(out))
    assert result.returncode == 0, result.stderr
    from offload.packager.bundle import read_bundle_record

    record, _ = read_bundle_record(out.read_bytes(), str(out))
    assert record.profile == 19 and record.host_format == "obj"
    assert (tmp_path / "saxpy.offload.o.sm_80.ptx").is_file()
    # a flag wins over the file
    result = run_cli("compile", str(source), "--no-portable", "--target-clang", "22", "-o", str(tmp_path / "b.bc"))
    assert result.returncode == 0, result.stderr
    record, _ = read_bundle_record((tmp_path / "b.bc").read_bytes(), "b.bc")
    assert record.profile == 22 and record.host_format == "bc"


def test_hip_without_rocm_is_a_clear_error(shipped, tmp_path, clang22):
    import glob

    if glob.glob("/opt/rocm/lib/libamdhip64.so*") or glob.glob("/usr/lib/*-linux-gnu/libamdhip64.so*"):
        pytest.skip("this machine has a HIP runtime")
    top = unpack(shipped["hip22"], tmp_path)
    result = run_make(top, scrubbed_env(tmp_path), "CLANG=clang-22")
    assert result.returncode != 0
    assert "no ROCm (libamdhip64) found" in result.stderr and "make ROCM_PATH=" in result.stderr
    assert not (top / "hip22").exists() and not (top / "hip22.tmp").exists()
