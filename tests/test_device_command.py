"""`mlir-offload device` as a user runs it: the OffloadBinary, --emit, errors and determinism."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import run_cli

DATA = Path(__file__).parent / "data" / "device"


def test_device_writes_one_bitcode_image_per_target(tmp_path):
    from offload.packager import ImageKind, read_binary

    out = tmp_path / "features.offload"
    result = run_cli(
        "device",
        str(DATA / "features.mlir"),
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
            str(DATA / "features.mlir"),
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
        str(DATA / "sqrt_div.mlir"),
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
    result = run_cli("device", str(DATA / name), *args, "-o", str(out))
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and expected in lines[0], result.stderr
    assert "Traceback" not in result.stderr
    assert not out.exists() and list(tmp_path.iterdir()) == []
