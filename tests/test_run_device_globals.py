"""Device globals: each gets an offload entry with its size, is registered by the runtime under its name,
and is a symbol of every arch's device image (clang 22 bitcode bundle and clang 19 object bundle)."""

from __future__ import annotations

import pytest

from conftest import REPO, require_tool, run_cli
from offload.toolchain.executable import read_executable

EXAMPLE = REPO / "examples" / "device_globals.mlir"


@pytest.mark.parametrize("clang,suffix", [(22, "bc"), (19, "o")])
def test_device_globals_are_registered_with_their_sizes(tmp_path, fake_cuda, clang, suffix):
    require_tool(f"clang-{clang}", clang)
    bundle, app = tmp_path / f"globals.offload.{suffix}", tmp_path / "globals"
    done = run_cli(
        "compile", str(EXAMPLE), "--offload-arch", "sm_80,sm_90", "--target-clang", str(clang), "-o", str(bundle)
    )
    assert done.returncode == 0, done.stderr
    done = run_cli("link", str(bundle), "-o", str(app))
    assert done.returncode == 0, done.stderr
    verified = run_cli("verify", str(app))
    assert verified.returncode == 0, verified.stdout + verified.stderr

    result = fake_cuda.run(app)
    assert result.returncode == 0, result.stderr
    registered = {(v["name"], v["size"]) for v in result.variables_registered()}
    assert registered == {("table", 64), ("coeffs", 16)}
    assert result.kernels_registered() == ["lookup"]
    assert [launch["block"] for launch in result.launches()] == [[16, 1, 1]]
    images = [image for section in read_executable(str(app)).device_sections.values() for image in section]
    assert sorted(image.arch for image in images) == ["sm_80", "sm_90"]
    for image in images:
        assert image.kernels() == {"lookup"}
        assert {"lookup", "table", "coeffs"} <= image.symbols()
