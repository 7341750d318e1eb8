"""compile -g carries the MLIR locations into the host's DWARF (read with llvm-dwarfdump on the linked
executable) and into the device code as .loc/.file line directives (the PTX, and the cubin's
.debug_line after ptxas -lineinfo); -lineinfo gives the device line information alone; without either,
no .mlir line table anywhere."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from conftest import REPO, require_tool, run_cli

SAXPY = REPO / "examples" / "saxpy.mlir"
KERNEL_LINES = set(range(10, 21))  # gpu.func @saxpy in examples/saxpy.mlir
MAIN_LINES = set(range(24, 70))  # func.func @main


def line_table(dwarfdump: str, path) -> tuple[list[str], set[int]]:
    """(file names, lines) of the .debug_line of an ELF file."""
    text = subprocess.run([dwarfdump, "--debug-line", str(path)], capture_output=True, text=True, check=True).stdout
    names = [line.split('"')[1] for line in text.splitlines() if line.strip().startswith("name:")]
    lines = {int(line.split()[1]) for line in text.splitlines() if line.startswith("0x")}
    return names, lines


@pytest.fixture(scope="module")
def tools():
    return require_tool("clang-22", 22), require_tool("llvm-dwarfdump-22", 22), require_tool("ptxas")


def compile_and_link(folder, *flags):
    shutil.copy(SAXPY, folder / "saxpy.mlir")
    done = run_cli(
        "compile", "saxpy.mlir", "--offload-arch", "sm_80", "--device-image=ptx", *flags, "-o", "s.bc", cwd=folder
    )
    assert done.returncode == 0, done.stderr
    done = run_cli("link", "s.bc", "-o", "app", cwd=folder)
    assert done.returncode == 0, done.stderr
    done = run_cli("extract", "s.bc", "-o", "images", cwd=folder)
    assert done.returncode == 0, done.stderr
    return folder / "app", (folder / "s.bc.sm_80.ptx").read_text(), next((folder / "images").glob("*.cubin"))


def test_g_gives_host_and_device_line_information(tmp_path, tools):
    _, dwarfdump, _ = tools
    app, ptx, cubin = compile_and_link(tmp_path, "-g")
    names, lines = line_table(dwarfdump, app)
    assert "saxpy.mlir" in names and lines & MAIN_LINES
    info = subprocess.run([dwarfdump, "--debug-info", str(app)], capture_output=True, text=True, check=True).stdout
    assert 'DW_AT_name\t("main")' in info
    # The compile unit names the source's folder, so a debugger finds saxpy.mlir from anywhere.
    assert f'DW_AT_comp_dir\t("{tmp_path}")' in info
    assert '.file\t1 "saxpy.mlir"' in ptx
    loc_lines = {int(line.split()[2]) for line in ptx.splitlines() if line.strip().startswith(".loc")}
    assert loc_lines and loc_lines - {0} <= KERNEL_LINES  # 0: code of no one line
    names, lines = line_table(dwarfdump, cubin)
    assert "saxpy.mlir" in names and lines & KERNEL_LINES


def test_lineinfo_is_device_only(tmp_path, tools):
    _, dwarfdump, _ = tools
    app, ptx, cubin = compile_and_link(tmp_path, "-lineinfo")
    assert "saxpy.mlir" not in line_table(dwarfdump, app)[0]
    assert '.file\t1 "saxpy.mlir"' in ptx and ".loc\t1 1" in ptx
    assert "saxpy.mlir" in line_table(dwarfdump, cubin)[0]


def test_no_debug_flag_no_mlir_lines(tmp_path, tools):
    _, dwarfdump, _ = tools
    app, ptx, cubin = compile_and_link(tmp_path)
    assert "saxpy.mlir" not in line_table(dwarfdump, app)[0]
    assert ".loc" not in ptx and "saxpy.mlir" not in ptx
