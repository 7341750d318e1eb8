"""compile --device-image=cubin runs the target clang's CUDA device link at compile (offload/device/device_lto.py):
its cubin is the one the link of the bitcode image makes, so the executable holds the same code in every kernel,
and the link of such a bundle runs no device LTO and no ptxas."""

from __future__ import annotations

import os
import shlex
from types import SimpleNamespace

import pytest
from test_cuda_device_link import kernel_code, many_kernels

from conftest import require_tool, run_cli

KERNELS = 24
ARCHS = ("sm_80", "sm_90")


def no_ptxas_toolkit(folder, real: str) -> str:
    """A CUDA toolkit of `real`'s files whose ptxas answers --version and --help but fails anything else."""
    (folder / "bin").mkdir(parents=True)
    for entry in os.listdir(real):
        if entry != "bin":
            os.symlink(os.path.join(real, entry), folder / entry)
    for tool in os.listdir(os.path.join(real, "bin")):
        if tool != "ptxas":
            os.symlink(os.path.join(real, "bin", tool), folder / "bin" / tool)
    ptxas = folder / "bin" / "ptxas"
    ptxas.write_text(
        "#!/bin/sh\n"
        f'case "$1" in --version|--help) exec {shlex.quote(os.path.join(real, "bin", "ptxas"))} "$@";; esac\n'
        "echo 'ptxas ran' >&2\nexit 1\n"
    )
    ptxas.chmod(0o755)
    return str(folder)


def test_cubin_bundle_links_the_bitcode_bundles_code_with_no_device_lto(tmp_path, fake_cuda):
    for tool in ("clang-22", "opt-22", "llc-22"):
        require_tool(tool, 22)
    require_tool("ptxas")
    (tmp_path / "many.mlir").write_text(many_kernels(KERNELS))
    arch = ",".join(ARCHS)
    for name, extra in (("bitcode", ()), ("cubin", ("--device-image=cubin",)), ("again", ("--device-image=cubin",))):
        done = run_cli(
            "compile", "many.mlir", "--offload-arch", arch, "--no-cache", *extra, "-o", f"{name}.bc", "-v", cwd=tmp_path
        )
        assert done.returncode == 0, done.stderr
        if name == "cubin":  # the device link's own pipeline ran here, for each arch
            assert len([line for line in done.stderr.splitlines() if "-passes=lto<O2>" in line]) == len(ARCHS)
    # Deterministic: the same bundle twice.
    assert (tmp_path / "cubin.bc").read_bytes() == (tmp_path / "again.bc").read_bytes()
    from offload.packager import ImageKind, read_offload_images

    images = read_offload_images((tmp_path / "cubin.bc").read_bytes(), "cubin.bc")
    assert sorted(i.strings["arch"] for i in images) == sorted(ARCHS)
    assert {i.image_kind for i in images} == {int(ImageKind.CUBIN)}
    # A toolkit whose ptxas answers the link's probes but fails any assembly: the cubin bundle links with it
    # (nvlink over the cubins, no device LTO, no ptxas), the bitcode bundle does not.
    from offload.toolchain.tools import find_cuda

    real = find_cuda()
    assert real is not None
    toolkit = no_ptxas_toolkit(tmp_path / "cuda", real.root)
    done = run_cli("link", "bitcode.bc", "-o", "never", f"--cuda-path={toolkit}", cwd=tmp_path)
    assert done.returncode == 1 and "ptxas ran" in done.stderr
    runs = {}
    for name, cuda in (("bitcode", []), ("cubin", [f"--cuda-path={toolkit}"])):
        done = run_cli("link", f"{name}.bc", "-o", name, *cuda, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        runs[name] = fake_cuda.run(tmp_path / name)
        assert runs[name].returncode == 0, runs[name].stderr
    bitcode, cubin = kernel_code(tmp_path / "bitcode"), kernel_code(tmp_path / "cubin")
    assert len([k for k in cubin if ".text.kernel_" in k]) == KERNELS * len(ARCHS)
    assert cubin == bitcode  # the same SASS in every kernel, both archs
    launched = [[(e["kernel"], e["grid"], e["block"]) for e in run.launches()] for run in runs.values()]
    assert [name for name, _, _ in launched[0]] == [f"kernel_{k}" for k in range(KERNELS)]
    assert launched[0] == launched[1] and all(e["ret"] == 0 for e in runs["cubin"].launches())
    assert runs["bitcode"].kernels_registered() == runs["cubin"].kernels_registered()


@pytest.mark.fast
def test_device_lto_is_chosen_for_cuda_cubins_only(monkeypatch):
    from offload.device import device_lto
    from offload.driver import stages
    from offload.formats.profiles import load_profile
    from offload.formats.targets import parse_offload_arch as parse_targets

    lto = device_lto.DeviceLto("/x/opt-22", "/x/llc-22", 2, "+ptx88")
    monkeypatch.setattr(device_lto, "find_device_lto", lambda profile, arch, root: lto)
    monkeypatch.setattr("offload.toolchain.tools.find_cuda", lambda path=None, host=None: SimpleNamespace(root="/x"))
    profile, cuda = load_profile(22), parse_targets("sm_80,sm_90")
    plain = SimpleNamespace(opt_level=3, ptxas_debug_flags=(), device_debug=False)
    assert stages.codegen("bitcode", plain, profile, cuda) is None
    assert stages.codegen("cubin", plain, profile, cuda).device_lto == {"sm_80": lto, "sm_90": lto}
    assert stages.codegen("ptx", plain, profile, cuda).device_lto == {}  # shipped PTX keeps our PTX floor
    debug = SimpleNamespace(opt_level=0, ptxas_debug_flags=("-g",), device_debug=True)
    assert stages.codegen("cubin", debug, profile, cuda).device_lto == {}  # -G: the link compiles at -O0
    assert stages.codegen("cubin", plain, profile, parse_targets("gfx90a")).device_lto == {}
    monkeypatch.setattr(device_lto, "find_device_lto", lambda profile, arch, root: lto if arch == "sm_80" else None)
    assert stages.codegen("cubin", plain, profile, cuda).device_lto == {}  # every arch's, or none


@pytest.mark.fast
def test_ptx_feature_is_the_one_the_target_driver_gives_its_device_link(tmp_path):
    from offload.device.device_lto import driver_ptx_feature

    clang = tmp_path / "clang"
    clang.write_text(
        "#!/bin/sh\n"
        "echo 'Debian clang version 22.1.8 (++20250101)' >&2\n"
        'echo \' "/usr/lib/llvm-22/bin/clang-nvlink-wrapper" "-o" "a.out" "-arch" "sm_80" '
        '"--plugin-opt=-mattr=+ptx88" "-L/usr/lib/llvm-22/lib"\' >&2\n'
    )
    clang.chmod(0o755)
    assert driver_ptx_feature(str(clang), "sm_80", "/usr/local/cuda") == "+ptx88"
    assert driver_ptx_feature(str(clang), "sm_80", "/usr/local/cuda", 22) == "+ptx88"
    assert driver_ptx_feature(str(clang), "sm_80", "/usr/local/cuda", 21) is None  # another clang's choice
    clang.write_text("#!/bin/sh\necho 'clang: error: unsupported' >&2\nexit 1\n")
    assert driver_ptx_feature(str(clang), "sm_80", "/usr/local/cuda") is None
    assert driver_ptx_feature(str(tmp_path / "missing"), "sm_80", "/usr/local/cuda") is None


def test_device_lto_ptx_is_the_device_links(tmp_path):
    """The PTX of the compile's device link is what clang-nvlink-wrapper's LTO writes (clang -save-temps)."""
    require_tool("clang-22", 22)
    require_tool("ptxas")
    for tool in ("opt-22", "llc-22"):
        require_tool(tool, 22)
    (tmp_path / "few.mlir").write_text(many_kernels(6))
    done = run_cli(
        "compile", "few.mlir", "--offload-arch", "sm_80", "--device-image=cubin", "--no-cache", "-save-temps",
        "-o", "few.bc", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    done = run_cli("compile", "few.mlir", "--offload-arch", "sm_80", "--no-cache", "-o", "bit.bc", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    link = tmp_path / "link"
    link.mkdir()
    done = run_cli("link", "../bit.bc", "-o", "app", "-save-temps", cwd=link)
    assert done.returncode == 0, done.stderr
    ours = (tmp_path / "few.2-native.sm_80.ptx").read_text()
    assert ours == (link / "app.nvptx64.sm_80.s").read_text() and ".entry kernel_5" in ours
    assert (tmp_path / "few.2-native.sm_80.cubin").read_bytes() == (link / "app.nvptx64.sm_80.cubin").read_bytes()


def test_cached_cubin_is_the_same_bundle_with_no_device_link(tmp_path):
    """The device-image cache keeps the device link's cubin: a warm compile runs neither opt's LTO, llc nor
    ptxas, and writes the same bundle."""
    for tool in ("clang-22", "opt-22", "llc-22"):
        require_tool(tool, 22)
    require_tool("ptxas")
    (tmp_path / "few.mlir").write_text(many_kernels(3))
    env = dict(os.environ, MLIR_OFFLOAD_CACHE_DIR=str(tmp_path / "cache"))
    logs = []
    for name in ("cold", "warm"):
        done = run_cli(
            "compile", "few.mlir", "--offload-arch", "sm_80", "--device-image=cubin", "-o", f"{name}.bc", "-v",
            cwd=tmp_path, env=env,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        logs.append(done.stderr)
    assert "-passes=lto<O2>" in logs[0] and "ptxas" in logs[0]
    assert "-passes=lto<O2>" not in logs[1] and "llc-22" not in logs[1] and "ptxas -c" not in logs[1]
    assert (tmp_path / "cold.bc").read_bytes() == (tmp_path / "warm.bc").read_bytes()
