"""A target machine: a plain venv without MLIR and llvmlite (only click, from this Python's site-packages,
on PYTHONPATH) links a bundle compiled elsewhere (`link --dry-run`, then a real link), verifies the
executable, ships the bundle and runs `doctor`, also on the shipped archive."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

from conftest import REPO, require_tool, run_cli

SAXPY = REPO / "examples" / "saxpy.mlir"


@pytest.fixture(scope="module")
def target_python(tmp_path_factory):
    work = tmp_path_factory.mktemp("target-venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(work / "venv")], check=True)
    deps = work / "deps"
    deps.mkdir()
    (deps / "click").symlink_to(Path(click.__file__).parent)
    python = work / "venv" / "bin" / "python"
    env = {"PATH": os.environ["PATH"], "HOME": str(work), "PYTHONPATH": f"{REPO}{os.pathsep}{deps}"}
    for missing in ("llvmlite", "mlir"):
        probe = subprocess.run([python, "-c", f"import {missing}"], env=env, capture_output=True, text=True)
        assert probe.returncode == 1 and "ModuleNotFoundError" in probe.stderr, missing

    def run(*args, cwd=work):
        return subprocess.run([python, "-m", "offload", *args], env=env, cwd=cwd, capture_output=True, text=True)

    return run, work


def test_link_verify_ship_and_doctor_without_mlir_or_llvmlite(target_python):
    require_tool("clang-22", 22)
    require_tool("ptxas")
    run, work = target_python
    bundle = work / "saxpy.offload.bc"
    done = run_cli("compile", str(SAXPY), "--offload-arch", "sm_80", "-o", str(bundle))  # where MLIR is
    assert done.returncode == 0, done.stderr

    dry = run("link", bundle.name, "-o", "app", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "--offload-new-driver saxpy.offload.bc" in dry.stdout and "-lcudart" in dry.stdout
    assert not (work / "app").exists()

    linked = run("link", bundle.name, "-o", "app")
    assert linked.returncode == 0, linked.stderr
    verified = run("verify", "app")
    assert verified.returncode == 0, verified.stderr
    assert "app: ok" in verified.stdout and "1 entries: saxpy" in verified.stdout

    shipped = run("ship", bundle.name, "-o", "app.tar.gz")
    assert shipped.returncode == 0, shipped.stderr
    doctor = run("doctor", "--bundle", "app.tar.gz", "--clang", "clang-22")
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert "can link it" in doctor.stdout
    assert "llvmlite: not loadable (this machine can link bundles, not compile them)" in doctor.stdout

    compiled = run("compile", str(SAXPY), "--offload-arch", "sm_80", "-o", "x.bc")
    assert compiled.returncode == 1 and "Traceback" not in compiled.stderr
    assert len(compiled.stderr.strip().splitlines()) == 1
