"""-G (nvcc's device debug): the device code at -O0 with full debug information and ptxas -g, where compile
runs ptxas and, for a bitcode bundle, at the link (the bundle asks for it; link -G asks for any bundle)."""

from __future__ import annotations

from conftest import REPO, require_tool, run_cli
from offload.formats.elf import read_elf

SAXPY = REPO / "examples" / "saxpy.mlir"
# What ptxas -g writes and -lineinfo does not: DWARF compile units and the SASS register map.
DEVICE_DEBUG_SECTIONS = {".debug_info", ".nv_debug_info_reg_sass"}


def sections(path) -> set[str]:
    return {section.name for section in read_elf(path.read_bytes(), str(path)).sections}


def test_compile_g_cubin_has_device_debug_information(tmp_path):
    require_tool("ptxas")
    for flag, folder in (("-G", "debug"), ("-lineinfo", "lines")):
        (tmp_path / folder).mkdir()
        done = run_cli(
            "compile",
            str(SAXPY),
            "--offload-arch",
            "sm_80",
            flag,
            "--device-image=cubin",
            "--host-format=obj",
            "-save-temps",
            "-o",
            "s.o",
            cwd=tmp_path / folder,
        )
        assert done.returncode == 0, done.stderr
    assert DEVICE_DEBUG_SECTIONS <= sections(tmp_path / "debug" / "saxpy.2-native.sm_80.cubin")
    assert not DEVICE_DEBUG_SECTIONS & sections(tmp_path / "lines" / "saxpy.2-native.sm_80.cubin")
    assert ".debug_line" in sections(tmp_path / "lines" / "saxpy.2-native.sm_80.cubin")
    # Device DWARF in PTX needs PTX ISA 7.5 (sm_80's own floor is 7.0).
    assert ".version 7.5" in (tmp_path / "debug" / "saxpy.2-native.sm_80.ptx").read_text()
    # -G is nvcc's: device optimization off whatever -O says, so -O3 -G is -G.
    done = run_cli(
        "compile",
        str(SAXPY),
        "--offload-arch",
        "sm_80",
        "-O3",
        "-G",
        "--device-image=cubin",
        "--host-format=obj",
        "-o",
        "o3.o",
        cwd=tmp_path / "debug",
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "debug" / "o3.o").read_bytes() == (tmp_path / "debug" / "s.o").read_bytes()


def test_bitcode_bundle_asks_its_link_for_device_debug(tmp_path):
    require_tool("clang-22", 22)
    require_tool("ptxas")
    for name, flags in (("g.bc", ["-G"]), ("plain.bc", [])):
        done = run_cli("compile", str(SAXPY), "--offload-arch", "sm_80", *flags, "-o", name, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    done = run_cli("inspect", "g.bc", cwd=tmp_path)
    assert "mlir-offload.device-debug=1" in done.stdout
    wanted = "-Wl,--device-compiler=nvptx64-nvidia-cuda=-g -Wl,--device-compiler=nvptx64-nvidia-cuda=-O0"
    assert wanted in run_cli("link", "g.bc", "-###", "-o", "app", cwd=tmp_path).stdout
    assert wanted not in run_cli("link", "plain.bc", "-###", "-o", "app", cwd=tmp_path).stdout
    assert wanted in run_cli("link", "plain.bc", "-G", "-###", "-o", "app", cwd=tmp_path).stdout
    done = run_cli("link", "g.bc", "-save-temps", "-o", "app", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Optimized debugging" not in done.stderr  # the wrapper's warning for what runs at -O0 as asked
    assert DEVICE_DEBUG_SECTIONS <= sections(tmp_path / "app.nvptx64.sm_80.cubin")
