"""One clang-discovery rule for a bundle made for clang N: `link`, `config --clang` (the Makefile fragment's
default OFFLOAD_CLANG) and a shipped archive's build.sh all pick clang-N, else /usr/lib/llvm-N/bin/clang,
else clang. Checked with a PATH whose plain `clang` is another clang (19): each must still pick clang-22."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tarfile

import pytest

from conftest import REPO, dry_run_words, require_tool, run_cli

SAXPY = REPO / "examples" / "saxpy.mlir"


@pytest.fixture(scope="module")
def misleading_path(tmp_path_factory):
    clang22 = require_tool("clang-22", 22)
    clang19 = require_tool("clang-19", 19)
    folder = tmp_path_factory.mktemp("bin")
    (folder / "clang").symlink_to(clang19)  # plain `clang` is clang 19 here
    return folder, clang22


def test_link_config_and_build_sh_pick_the_same_clang(misleading_path, tmp_path):
    folder, clang22 = misleading_path
    env = dict(os.environ, PATH=f"{folder}{os.pathsep}{os.environ['PATH']}")
    env.pop("CLANG", None)
    bundle = tmp_path / "s.offload.bc"
    assert run_cli("compile", str(SAXPY), "--offload-arch", "sm_80", "-o", str(bundle), env=env).returncode == 0
    linked = run_cli("link", str(bundle), "--dry-run", "-o", str(tmp_path / "app"), env=env)
    assert linked.returncode == 0, linked.stderr
    link_clang = dry_run_words(linked.stdout)[1][0]
    configured = run_cli("config", "--clang", env=env)
    assert configured.returncode == 0, configured.stderr
    assert configured.stdout.strip() == link_clang and os.path.realpath(link_clang) == os.path.realpath(clang22)

    shipped = run_cli("ship", str(bundle), "-o", str(tmp_path / "app.tar.gz"), env=env)
    assert shipped.returncode == 0, shipped.stderr
    assert "[CLANG=clang-22]" in shipped.stdout
    with tarfile.open(tmp_path / "app.tar.gz") as archive:
        archive.extractall(tmp_path / "unpacked", filter="data")
    checked = subprocess.run(
        ["sh", "build.sh", "check"], cwd=tmp_path / "unpacked" / "app", env=env, capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stderr
    assert "ready to link with clang-22" in checked.stdout + checked.stderr


def test_makefile_fragment_defaults_to_config_clang(misleading_path, tmp_path):
    require_tool("make")
    folder, _ = misleading_path
    env = dict(os.environ, PATH=f"{folder}{os.pathsep}{os.environ['PATH']}", PYTHONPATH=str(REPO))
    (tmp_path / "Makefile").write_text(
        f"MLIR_OFFLOAD = {shlex.quote(sys.executable)} -m offload\n"
        f"include {REPO / 'offload' / 'data' / 'mlir-offload.mk'}\n"
        "show:\n\t@echo $(OFFLOAD_CLANG)\n"
    )
    shown = subprocess.run(["make", "-s", "show"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert shown.stdout.strip().endswith("clang-22"), shown.stderr
    shown = subprocess.run(
        ["make", "-s", "show", "MLIR_OFFLOAD_FLAGS=--target-clang=19 --portable"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert shown.stdout.strip().endswith("clang-19"), shown.stderr
