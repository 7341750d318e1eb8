"""Which LLVM runs the LLVM stages of device images, with which pipeline (offload/device/optimizer.py,
llvm_tools.py): opt and the llvm-link beside it, of MLIR's LLVM major, where there are some, else llvmlite;
clang's pre-link pipeline for bitcode images, the whole default pipeline for native ones; MLIR_OFFLOAD_OPT
chooses."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from conftest import REPO, require_tool, run_cli
from offload.device.optimizer import OPT_ENVIRONMENT, find_optimizer, pipeline_text
from offload.errors import OffloadError
from offload.formats.targets import AMDGPU_TRIPLE, NVPTX_TRIPLE

SAXPY = str(REPO / "examples" / "saxpy.mlir")


def test_pipelines():
    assert pipeline_text(3, True) == "globaldce,lto-pre-link<O3>,globaldce,strip-dead-prototypes"
    assert pipeline_text(3, True, ("nvvm-reflect",)) == "globaldce,nvvm-reflect,globaldce,strip-dead-prototypes"
    assert pipeline_text(2, False) == "globaldce,default<O2>,globaldce,strip-dead-prototypes"


def test_the_llvm_major_is_the_bindings_and_llvmlites():
    from importlib import metadata

    import llvmlite.binding as llvm

    from offload.about import LLVM_MAJOR, MLIR_BINDINGS_DISTRIBUTION

    assert llvm.llvm_version_info[0] == LLVM_MAJOR
    assert int(metadata.version(MLIR_BINDINGS_DISTRIBUTION).split(".")[0]) == LLVM_MAJOR


def test_choice_of_optimizer(monkeypatch, tmp_path):
    monkeypatch.setenv(OPT_ENVIRONMENT, "llvmlite")
    assert find_optimizer().in_process
    monkeypatch.setenv(OPT_ENVIRONMENT, "no-such-opt-anywhere")
    with pytest.raises(OffloadError, match="is not an opt of LLVM 22"):
        find_optimizer()
    alone = tmp_path / "opt"  # a real opt, but no llvm-link beside it
    alone.write_text(f'#!/bin/sh\nexec "{require_tool("opt-22", 22)}" "$@"\n')
    alone.chmod(alone.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv(OPT_ENVIRONMENT, str(alone))
    with pytest.raises(OffloadError, match="with an llvm-link beside it"):
        find_optimizer()
    monkeypatch.delenv(OPT_ENVIRONMENT)
    tools = find_optimizer((NVPTX_TRIPLE, AMDGPU_TRIPLE))
    assert tools.path and tools.link and tools.version
    assert os.path.basename(tools.link).startswith("llvm-link") and tools.version.startswith("22.")
    import llvmlite.binding as llvm  # the data layouts opt gives are the ones LLVM's target machines have

    llvm.initialize_all_targets()
    for triple in (NVPTX_TRIPLE, AMDGPU_TRIPLE):
        machine = llvm.Target.from_triple(triple).create_target_machine()
        assert tools.data_layout(triple) == str(machine.target_data)


@pytest.fixture
def logging_opt(tmp_path) -> tuple[str, Path]:
    """opt-22 behind a script that records its arguments, llvm-link-22 beside it."""
    opt = require_tool("opt-22", 22)
    log = tmp_path / "opt.log"
    script = tmp_path / "opt"
    script.write_text(f'#!/bin/sh\necho "$@" >> "{log}"\nexec "{opt}" "$@"\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    (tmp_path / "llvm-link").symlink_to(require_tool("llvm-link-22", 22))
    return str(script), log


def test_bitcode_images_get_the_pre_link_pipeline_native_ones_the_whole(logging_opt, tmp_path):
    script, log = logging_opt
    env = {**os.environ, OPT_ENVIRONMENT: script}
    done = run_cli("compile", SAXPY, "--offload-arch", "sm_80", "-o", str(tmp_path / "a.bc"), env=env)
    assert done.returncode == 0, done.stderr
    assert "-passes=internalize,globaldce,nvvm-reflect,globaldce" in log.read_text()
    log.unlink()
    done = run_cli(
        "compile",
        SAXPY,
        "--offload-arch",
        "sm_80",
        "--device-image=ptx",
        "-O2",
        "-o",
        str(tmp_path / "b.bc"),
        env=env,
    )
    if done.returncode != 0 and "ptxas" in done.stderr:
        pytest.skip("no ptxas for cubin images")
    assert done.returncode == 0, done.stderr
    assert "-passes=internalize,globaldce,default<O2>" in log.read_text()
    assert "-mcpu=sm_80" in log.read_text()
    log.unlink()
    # A cubin is the target's device link of the bitcode image (offload/device/device_lto.py): the pre-link
    # pipeline here, the device LTO's own after it (by LLVM's tools) where this machine has them.
    done = run_cli(
        "compile", SAXPY, "--offload-arch", "sm_80", "--device-image=cubin", "-o", "c.bc", "-v", env=env, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    lto = "-passes=lto<O2>" in done.stderr
    assert ("-passes=internalize,globaldce,nvvm-reflect,globaldce" in log.read_text()) == lto
    assert ("-passes=internalize,globaldce,default<O3>" in log.read_text()) != lto
    log.unlink()
    done = run_cli("device", SAXPY, "--offload-arch", "sm_90", "-o", str(tmp_path / "c.offload"), env=env)
    assert done.returncode == 0, done.stderr
    assert "nvvm-reflect" in log.read_text() and "-mcpu=sm_90" in log.read_text()


def test_opt_and_llvmlite_images_hold_the_same_kernels(tmp_path):
    require_tool("opt-22", 22)
    outputs = {}
    for optimizer in ("opt-22", "llvmlite"):
        folder = tmp_path / optimizer
        done = run_cli(
            "device",
            SAXPY,
            "--offload-arch",
            "sm_80",
            "--emit=ll",
            "-o",
            str(folder),
            env={**os.environ, OPT_ENVIRONMENT: optimizer},
        )
        assert done.returncode == 0, done.stderr
        outputs[optimizer] = (folder / "saxpy.sm_80.ll").read_text()
    import llvmlite.binding as llvm

    defined = {
        name: {f.name for f in llvm.parse_assembly(text).functions if not f.is_declaration}
        for name, text in outputs.items()
    }
    assert defined["opt-22"] == defined["llvmlite"] == {"saxpy"}


def test_a_failing_opt_is_one_error_line(tmp_path):
    opt = require_tool("opt-22", 22)
    script = tmp_path / "opt"
    # Answers the probe (an empty module for a triple) as opt-22 does, fails on real work.
    script.write_text(f'#!/bin/sh\ncase "$*" in *-mtriple=*) exec "{opt}" "$@";; esac\necho "opt: boom" >&2\nexit 3\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    (tmp_path / "llvm-link").symlink_to(require_tool("llvm-link-22", 22))
    done = run_cli(
        "device",
        SAXPY,
        "--offload-arch",
        "sm_80",
        "-o",
        str(tmp_path / "x.offload"),
        env={**os.environ, OPT_ENVIRONMENT: str(script)},
    )
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "opt failed to optimize the sm_80 image: opt: boom" in done.stderr
    assert not (tmp_path / "x.offload").exists()


def test_the_device_command_loads_no_second_llvm(tmp_path):
    """With LLVM's tools the parent holds only the MLIR bindings' LLVM (one LLVM in memory, not two): llvmlite's
    library is never loaded, and the image still holds the kernel with libdevice linked and internalized."""
    require_tool("opt-22", 22)
    out = tmp_path / "saxpy"
    code = (
        "import sys\nfrom offload.cli import main\ntry:\n    main()\nexcept SystemExit as e:\n"
        "    assert not e.code, e.code\nassert 'llvmlite.binding' not in sys.modules, 'llvmlite loaded'\n"
    )
    import subprocess
    import sys

    done = subprocess.run(
        [
            sys.executable,
            "-c",
            code,
            "device",
            SAXPY,
            "--offload-arch",
            "sm_80",
            "--emit=bc",
            "-o",
            str(out),
            "--no-cache",
        ],
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if k != OPT_ENVIRONMENT},
    )
    assert done.returncode == 0, done.stderr
    from offload.packager.bitcode_ident import bitcode_module

    module = bitcode_module((out / "saxpy.sm_80.bc").read_bytes())
    assert module is not None
    assert [f.name for f in module.functions if not f.is_declaration] == ["saxpy"]
    assert module.data_layout == find_optimizer((NVPTX_TRIPLE,)).data_layout(NVPTX_TRIPLE)
