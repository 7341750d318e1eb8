"""offload/data/scripts/fatbinary: clang-19's `--image=profile=...` options rewritten to CUDA 13's `--image3=...`,
handed to the next real fatbinary on PATH (never to itself)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from fakert import fatbinary_wrapper_dir

pytestmark = pytest.mark.no_toolchain


@pytest.fixture
def recording_fatbinary(tmp_path) -> tuple[Path, Path]:
    """A stand-in 'real' fatbinary that records its arguments, one per line."""
    bin_dir, record = tmp_path / "cuda" / "bin", tmp_path / "args.txt"
    bin_dir.mkdir(parents=True)
    script = bin_dir / "fatbinary"
    script.write_text(f'#!/bin/sh\nfor a do printf "%s\\n" "$a"; done > {record}\n')
    script.chmod(0o755)
    return bin_dir, record


def run_wrapper(args: list[str], path: str, cuda_path: str | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PATH=path)
    env.pop("CUDA_PATH", None)
    if cuda_path:
        env["CUDA_PATH"] = cuda_path
    return subprocess.run(
        [os.path.join(fatbinary_wrapper_dir(), "fatbinary"), *args], env=env, capture_output=True, text=True
    )


def test_wrapper_rewrites_image_options(recording_fatbinary):
    bin_dir, record = recording_fatbinary
    # The wrapper's own directory twice on PATH: it must skip itself both times.
    path = os.pathsep.join([fatbinary_wrapper_dir(), fatbinary_wrapper_dir(), str(bin_dir), "/usr/bin", "/bin"])
    proc = run_wrapper(
        [
            "-64",
            "--create",
            "/tmp/out dir/a.fatbin",
            "--image=profile=sm_80,file=/tmp/x 1.img",
            "--image=profile=compute_90a,file=/tmp/y.ptx",
            "--compress-all",
        ],
        path,
    )
    assert proc.returncode == 0, proc.stderr
    assert record.read_text().splitlines() == [
        "-64",
        "--create",
        "/tmp/out dir/a.fatbin",
        "--image3=kind=elf,sm=80,file=/tmp/x 1.img",
        "--image3=kind=ptx,sm=90a,file=/tmp/y.ptx",
        "--compress-all",
    ]


def test_wrapper_refuses_unknown_image_spec(recording_fatbinary):
    bin_dir, record = recording_fatbinary
    proc = run_wrapper(["--image=profile=sm_80,file=x,extra=1"], os.pathsep.join([str(bin_dir), "/usr/bin", "/bin"]))
    assert proc.returncode == 1
    assert "unsupported image option 'extra=1'" in proc.stderr
    assert not record.exists()


def test_wrapper_falls_back_to_cuda_path(recording_fatbinary):
    bin_dir, record = recording_fatbinary
    # /usr/bin has no fatbinary; $CUDA_PATH/bin comes before the /usr/local/cuda default.
    proc = run_wrapper(
        ["--image=profile=sm_90,file=k.img"],
        os.pathsep.join([fatbinary_wrapper_dir(), "/usr/bin", "/bin"]),
        cuda_path=str(bin_dir.parent),
    )
    assert proc.returncode == 0, proc.stderr
    assert record.read_text().splitlines() == ["--image3=kind=elf,sm=90,file=k.img"]
