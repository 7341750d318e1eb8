"""Which LLVM optimizes device images, with which pipeline (offload/build/device/optimizer.py): a
release-build opt of our LLVM major where there is one, clang's pre-link pipeline for bitcode images,
the whole default pipeline for native ones; MLIR_OFFLOAD_OPT chooses."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from conftest import REPO, require_tool, run_cli
from offload.build.device.optimizer import OPT_ENVIRONMENT, find_optimizer, pipeline_text
from offload.errors import OffloadError

SAXPY = str(REPO / "examples" / "saxpy.mlir")


def test_pipelines():
    assert pipeline_text(3, True) == "globaldce,lto-pre-link<O3>,globaldce,strip-dead-prototypes"
    assert pipeline_text(2, False) == "globaldce,default<O2>,globaldce,strip-dead-prototypes"


def test_choice_of_optimizer(monkeypatch):
    monkeypatch.setenv(OPT_ENVIRONMENT, "llvmlite")
    assert find_optimizer(3).path is None
    monkeypatch.setenv(OPT_ENVIRONMENT, "no-such-opt-anywhere")
    with pytest.raises(OffloadError, match="is not an opt of LLVM 22"):
        find_optimizer(3)
    monkeypatch.delenv(OPT_ENVIRONMENT)
    assert find_optimizer(0).path is None  # -O0: no process to start for a few passes


@pytest.fixture
def logging_opt(tmp_path) -> tuple[str, Path]:
    """opt-22 behind a script that records its arguments."""
    opt = require_tool("opt-22", 22)
    log = tmp_path / "opt.log"
    script = tmp_path / "opt"
    script.write_text(f'#!/bin/sh\necho "$@" >> "{log}"\nexec "{opt}" "$@"\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script), log


def test_bitcode_images_get_the_pre_link_pipeline_native_ones_the_whole(logging_opt, tmp_path):
    script, log = logging_opt
    env = {**os.environ, OPT_ENVIRONMENT: script}
    done = run_cli("compile", SAXPY, "--offload-arch", "sm_80", "-o", str(tmp_path / "a.bc"), env=env)
    assert done.returncode == 0, done.stderr
    assert "-passes=globaldce,lto-pre-link<O3>" in log.read_text()
    log.unlink()
    done = run_cli("compile", SAXPY, "--offload-arch", "sm_80", "--device-image=cubin", "-O2",
                   "-o", str(tmp_path / "b.bc"), env=env)
    if done.returncode != 0 and "ptxas" in done.stderr:
        pytest.skip("no ptxas for cubin images")
    assert done.returncode == 0, done.stderr
    assert "-passes=globaldce,default<O2>" in log.read_text()
    assert "-mcpu=sm_80" in log.read_text()
    log.unlink()
    done = run_cli("device", SAXPY, "--offload-arch", "sm_90", "-o", str(tmp_path / "c.offload"), env=env)
    assert done.returncode == 0, done.stderr
    assert "lto-pre-link<O3>" in log.read_text() and "-mcpu=sm_90" in log.read_text()


def test_opt_and_llvmlite_images_hold_the_same_kernels(tmp_path):
    require_tool("opt-22", 22)
    outputs = {}
    for optimizer in ("opt-22", "llvmlite"):
        folder = tmp_path / optimizer
        done = run_cli("device", SAXPY, "--offload-arch", "sm_80", "--emit=ll", "-o", str(folder),
                       env={**os.environ, OPT_ENVIRONMENT: optimizer})
        assert done.returncode == 0, done.stderr
        outputs[optimizer] = (folder / "saxpy.sm_80.ll").read_text()
    import llvmlite.binding as llvm

    defined = {name: {f.name for f in llvm.parse_assembly(text).functions if not f.is_declaration}
               for name, text in outputs.items()}
    assert defined["opt-22"] == defined["llvmlite"] == {"saxpy"}


def test_a_failing_opt_is_one_error_line(tmp_path):
    opt = require_tool("opt-22", 22)
    script = tmp_path / "opt"
    # Answers --version as opt-22 does, fails on real work.
    script.write_text(f'#!/bin/sh\ncase "$1" in --version) exec "{opt}" --version;; esac\n'
                      'echo "opt: boom" >&2\nexit 3\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    done = run_cli("device", SAXPY, "--offload-arch", "sm_80", "-o", str(tmp_path / "x.offload"),
                   env={**os.environ, OPT_ENVIRONMENT: str(script)})
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "failed to optimize the sm_80 image: opt: boom" in done.stderr
    assert not (tmp_path / "x.offload").exists()
