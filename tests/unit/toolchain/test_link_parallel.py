"""link runs the device links of the archs side by side where the linking clang can (its profile's
link.device_jobs_option: clang 22's --offload-jobs=N, the linker wrapper's --wrapper-jobs), and the
executable is the same byte for byte as one linked an arch at a time."""

from __future__ import annotations

import os
import shlex
from types import SimpleNamespace

import pytest

from conftest import REPO, require_tool, run_cli

SAXPY = REPO / "examples" / "saxpy.mlir"


def bundle_with(*targets: str):
    return SimpleNamespace(record=SimpleNamespace(targets=targets))


@pytest.mark.fast
def test_one_job_per_image_at_most_one_per_cpu(monkeypatch):
    from offload.formats.profiles import load_profile
    from offload.toolchain import link

    monkeypatch.setattr(link.os, "cpu_count", lambda: 4)
    clang22 = load_profile(22)
    assert link.device_link_jobs(clang22, [bundle_with("cuda:sm_80", "cuda:sm_90")], []) == ["--offload-jobs=2"]
    # Two bundles for the same archs: still one image per arch after the device link.
    assert link.device_link_jobs(clang22, [bundle_with("cuda:sm_80"), bundle_with("cuda:sm_80")], []) == []
    many = [bundle_with(*(f"cuda:sm_{arch}" for arch in (70, 75, 80, 86, 90)))]
    assert link.device_link_jobs(clang22, many, []) == ["--offload-jobs=4"]
    # The user's own jobs option is theirs; a clang without the option gets none.
    assert link.device_link_jobs(clang22, many, ["--offload-jobs=1"]) == []
    assert link.device_link_jobs(load_profile(19), many, []) == []


def test_side_by_side_device_links_make_the_same_executable(tmp_path):
    require_tool("clang-22", 22)
    bundle = tmp_path / "saxpy.offload.bc"
    done = run_cli("compile", str(SAXPY), "--offload-arch", "sm_80,sm_90", "-o", str(bundle))
    assert done.returncode == 0, done.stderr
    done = run_cli("link", str(bundle), "-o", str(tmp_path / "parallel"), "--dry-run")
    assert done.returncode == 0, done.stderr
    command = shlex.split(done.stdout.strip().splitlines()[-1])
    if (os.cpu_count() or 1) > 1:
        assert "--offload-jobs=2" in command
    for name, flags in (("parallel", []), ("serial", ["--offload-jobs=1"])):
        done = run_cli("link", str(bundle), *flags, "-o", str(tmp_path / name))
        assert done.returncode == 0, done.stderr
    assert (tmp_path / "parallel").read_bytes() == (tmp_path / "serial").read_bytes()
