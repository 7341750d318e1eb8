"""A plain (non-editable) install: the wheel of this repository, installed into a fresh venv that sees the
MLIR bindings and llvmlite of this Python, compiles a program, links it and prints the make fragment's
path: the package data (profiles, ship templates, mlir-offload.mk) travels inside the wheel."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, require_tool


def test_wheel_in_a_fresh_venv_compiles_links_and_finds_its_data(tmp_path):
    try:
        import wheel  # noqa: F401  (setuptools builds wheels with it; scripts/setup installs it)
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("the wheel package is missing (scripts/setup installs it)")
        pytest.skip("the wheel package is missing")
    source = tmp_path / "source"  # a copy: building in place would leave build/ in the repository
    skipped = shutil.ignore_patterns(".git", ".venv", "__pycache__", "*.egg-info", ".pytest_cache", ".hypothesis")
    shutil.copytree(
        REPO,
        source,
        ignore=lambda folder, names: (
            set(skipped(folder, names)) | ({"build", "dist"} & set(names) if Path(folder) == REPO else set())
        ),
    )  # the top-level build/ and dist/ only
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "-w",
            str(tmp_path / "dist"),
            str(source),
        ],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr
    (wheel_file,) = (tmp_path / "dist").glob("mlir_offload-*.whl")

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    installed = subprocess.run(
        [venv / "bin" / "python", "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel_file)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert installed.returncode == 0, installed.stderr
    where = subprocess.run(
        [
            venv / "bin" / "python",
            "-c",
            "import offload.driver.plan, offload.toolchain.link as m; "
            "print(offload.driver.plan.__file__); print(m.__file__)",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    files = where.stdout.split()
    assert len(files) == 2 and all(f.startswith(str(venv)) for f in files), where.stdout + where.stderr  # the wheel

    # The wrappers clang's tools run (fatbinary, ptxas) keep their execute bit through the wheel.
    data = Path(files[1]).parent.parent / "data"
    for wrapper in (data / "scripts" / "fatbinary", data / "ptxas" / "bin" / "ptxas"):
        assert wrapper.is_file() and os.access(wrapper, os.X_OK), wrapper

    tool = str(venv / "bin" / "mlir-offload")
    mk = subprocess.run([tool, "config", "--mk"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert mk.returncode == 0, mk.stderr
    assert mk.stdout.strip().startswith(str(venv)) and Path(mk.stdout.strip()).is_file()
    # The stand-ins for CUDA headers a toolkit may lack (config --cflags) are in the wheel, one folder each.
    gaps = sorted(p.relative_to(data).as_posix() for p in (data / "cuda" / "header-gaps").glob("*/*.h"))
    assert gaps == [
        "cuda/header-gaps/curand/curand_mtgp32_kernel.h",
        "cuda/header-gaps/texture/texture_fetch_functions.h",
    ]

    compiled = subprocess.run(
        [tool, "compile", str(REPO / "examples" / "saxpy.mlir"), "--offload-arch", "sm_80", "-o", "saxpy.offload.bc"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert compiled.returncode == 0, compiled.stderr
    require_tool("clang-22", 22)
    require_tool("ptxas")
    linked = subprocess.run(
        [tool, "link", "saxpy.offload.bc", "-o", "saxpy"], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert linked.returncode == 0, linked.stderr
    verified = subprocess.run([tool, "verify", "saxpy"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert verified.returncode == 0 and "1 entries: saxpy" in verified.stdout, verified.stdout + verified.stderr
