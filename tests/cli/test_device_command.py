"""`mlir-offload device` as a user runs it: the OffloadBinary, --emit, errors and determinism."""

from __future__ import annotations

import subprocess

import pytest

from conftest import DATA, REPO, run_cli

DEVICE_DATA = DATA / "device"


def test_device_writes_one_bitcode_image_per_target(tmp_path):
    from offload.packager import ImageKind, read_binary

    out = tmp_path / "features.offload"
    result = run_cli(
        "device",
        str(DEVICE_DATA / "features.mlir"),
        "--offload-arch",
        "sm_80,sm_90,gfx90a",
        "-O3",
        "--no-cache",
        "-o",
        str(out),
    )
    assert result.returncode == 0, result.stderr
    images = read_binary(out.read_bytes())
    assert [(i.strings, i.image_kind, i.offload_kind) for i in images] == [
        ({"triple": "nvptx64-nvidia-cuda", "arch": "sm_80"}, ImageKind.BITCODE, 2),
        ({"triple": "nvptx64-nvidia-cuda", "arch": "sm_90"}, ImageKind.BITCODE, 2),
        ({"triple": "amdgcn-amd-amdhsa", "arch": "gfx90a"}, ImageKind.BITCODE, 4),
    ]
    # Determinism: a second run, which builds its images again (no cache), gives the same bytes.
    again = tmp_path / "again.offload"
    assert (
        run_cli(
            "device",
            str(DEVICE_DATA / "features.mlir"),
            "--offload-arch",
            "sm_80,sm_90,gfx90a",
            "-O3",
            "--no-cache",
            "-o",
            str(again),
        ).returncode
        == 0
    )
    assert again.read_bytes() == out.read_bytes()


def test_emit_ll_writes_a_module_per_target(tmp_path):
    result = run_cli(
        "device",
        str(DEVICE_DATA / "sqrt_div.mlir"),
        "--offload-arch",
        "sm_80,gfx90a",
        "--emit=ll",
        "--fast-math",
        "-o",
        str(tmp_path / "out"),
    )
    assert result.returncode == 0, result.stderr
    files = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert files == ["sqrt_div.gfx90a.ll", "sqrt_div.sm_80.ll"]
    assert 'target triple = "amdgcn-amd-amdhsa"' in (tmp_path / "out" / "sqrt_div.gfx90a.ll").read_text()


@pytest.mark.parametrize(
    "name, args, expected",
    [
        ("syntax_error.mlir", ["--offload-arch", "sm_80"], "syntax_error.mlir:4:26: error: "),
        ("features.mlir", ["--offload-arch", "sm_9x"], "mlir-offload: error: unknown CUDA architecture 'sm_9x'"),
        ("features.mlir", ["--offload-arch", "gfx9999"], "mlir-offload: error: unknown AMDGPU architecture 'gfx9999'"),
        ("host_only.mlir", ["--offload-arch", "sm_80"], "host_only.mlir:1:1: error: no gpu.module"),
        ("unsupported.mlir", ["--offload-arch", "sm_80"], "unsupported.mlir:6:7: error: 'linalg.fill'"),
        ("clash.mlir", ["--offload-arch", "gfx90a"], "clash.mlir:9:5: error: symbol 'scale' is defined by both"),
        ("unresolved.mlir", ["--offload-arch", "sm_80"], "unresolved.mlir:5:5: error: unresolved device function"),
        ("features.mlir", [], "mlir-offload: error: no offload target"),
    ],
)
def test_bad_input_is_one_line_exit_1_and_no_output(tmp_path, name, args, expected):
    out = tmp_path / "out.offload"
    result = run_cli("device", str(DEVICE_DATA / name), *args, "-o", str(out))
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and expected in lines[0], result.stderr
    assert "Traceback" not in result.stderr
    assert not out.exists() and list(tmp_path.iterdir()) == []


SAXPY = REPO / "examples" / "saxpy.mlir"


def test_emit_ptx_writes_one_ptx_per_arch_that_ptxas_assembles(tmp_path):
    """`--emit=ptx` (nvcc's `-ptx`): one file per arch, the PTX a `--device-image=ptx` compile puts beside
    its bundle, byte for byte; one arch and `-o NAME.ptx` writes that file."""
    from conftest import require_tool

    ptxas = require_tool("ptxas")
    folder = tmp_path / "ptx"
    done = run_cli("device", str(SAXPY), "--offload-arch", "sm_80,sm_90", "--emit=ptx", "-o", str(folder))
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in folder.iterdir()) == ["saxpy.sm_80.ptx", "saxpy.sm_90.ptx"]
    assert ".target sm_90" in (folder / "saxpy.sm_90.ptx").read_text()
    single = tmp_path / "k.ptx"
    done = run_cli("device", str(SAXPY), "-arch=sm_80", "-ptx", "-o", str(single))  # nvcc's words
    assert done.returncode == 0, done.stderr
    assert single.read_bytes() == (folder / "saxpy.sm_80.ptx").read_bytes()
    bundle = tmp_path / "s.offload.bc"
    done = run_cli("compile", str(SAXPY), "--offload-arch", "sm_80", "--device-image=ptx", "-o", str(bundle))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "s.offload.bc.sm_80.ptx").read_bytes() == single.read_bytes()
    cubin = tmp_path / "k.cubin"
    subprocess.run([ptxas, "-arch=sm_80", str(single), "-o", str(cubin)], check=True)
    assert cubin.read_bytes()[:4] == b"\x7fELF"


@pytest.mark.parametrize(
    "words, message",
    [
        (["device", "--emit=ptx", "--offload-arch", "gfx90a"], "--emit=ptx: gfx90a has no PTX (PTX is CUDA's)"),
        (["compile", "-ptx", "--offload-arch", "sm_80"], "mlir-offload device IN.mlir --offload-arch ARCH -ptx"),
        (["device", "-cubin", "--offload-arch", "sm_80"], "ptxas -arch=sm_XX K.ptx -o K.cubin"),
    ],
)
def test_ptx_and_cubin_asked_where_they_are_not_made_is_one_line(tmp_path, words, message):
    out = tmp_path / "out"
    done = run_cli(words[0], str(SAXPY), *words[1:], "-o", str(out))
    assert done.returncode in (1, 2)
    (line,) = done.stderr.splitlines()
    assert message in line and line.startswith("mlir-offload: error: ")
    assert not out.exists()
