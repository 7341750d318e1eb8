"""One device-stage skeleton (offload/device/skeleton.py) whichever backend runs it: --link-bitcode keeps
the pipeline the image asks for (it used to switch a bitcode image to llvmlite's default<On>), the
llvmlite backend honours the pre-link pipeline, and every stage's output can be dumped."""

from __future__ import annotations

import os
from pathlib import Path

import llvmlite.binding as llvm
import llvmlite.ir as lir
import pytest

from conftest import DATA, REPO, run_cli
from offload.device import CompileOptions, compile_device, parse_offload_arch
from offload.device.kinds import KINDS
from offload.device.optimizer import OPT_ENVIRONMENT, pipeline_text
from offload.device.skeleton import STAGES
from offload.errors import OffloadError
from offload.mlir.frontend import load_program

DEVICE_DATA = DATA / "device"
FEATURES = DEVICE_DATA / "features.mlir"


def _library(tmp_path: Path, triple: str = "nvptx64-nvidia-cuda") -> Path:
    """A device library defining one function nothing calls."""
    module = lir.Module(name="unused")
    module.triple = triple
    f32 = lir.FloatType()
    function = lir.Function(module, lir.FunctionType(f32, [f32]), "unused_helper")
    builder = lir.IRBuilder(function.append_basic_block())
    builder.ret(builder.fadd(function.args[0], function.args[0]))
    path = tmp_path / f"unused.{triple.split('-')[0]}.bc"
    path.write_bytes(llvm.parse_assembly(str(module)).as_bitcode())
    return path


def test_link_bitcode_keeps_the_pre_link_pipeline_of_a_bitcode_image(tmp_path):
    library = _library(tmp_path)
    out = tmp_path / "app.offload.bc"
    done = run_cli(
        "compile",
        str(FEATURES),
        "--offload-arch",
        "sm_80",
        "--link-bitcode",
        str(library),
        "-v",
        "--no-cache",
        "-o",
        str(out),
        env={k: v for k, v in os.environ.items() if k != OPT_ENVIRONMENT},
    )
    assert done.returncode == 0, done.stderr
    opt_runs = [line for line in done.stderr.splitlines() if "-passes=internalize," in line]
    pre_link = pipeline_text(3, True, KINDS["cuda"].pre_link_passes)  # what a bitcode image gets
    assert len(opt_runs) == 1 and f"-passes=internalize,{pre_link}" in opt_runs[0], done.stderr


@pytest.mark.parametrize("backend", ["llvm-tools", "llvmlite"])
def test_both_backends_honour_lto_pre_link(monkeypatch, backend):
    if backend == "llvmlite":
        monkeypatch.setenv(OPT_ENVIRONMENT, "llvmlite")
    else:
        monkeypatch.delenv(OPT_ENVIRONMENT, raising=False)
    program = load_program(str(FEATURES))
    targets = parse_offload_arch("sm_80")

    def image(opt_level: int, lto_pre_link: bool) -> bytes:
        options = CompileOptions(opt_level=opt_level, cache=False)
        (built,) = compile_device(program, targets, options, jobs=1, lto_pre_link=lto_pre_link)
        return built.bitcode

    if backend == "llvm-tools":
        # The pre-link pipeline is the same at every -O (the target's device LTO optimizes the image) ...
        assert image(3, True) == image(0, True)
    else:
        # ... llvmlite builds no pre-link pipeline: its images get default<On> (bench_code_quality compares them)
        assert image(3, True) != image(0, True)
    # ... while a native image gets the whole default<On>.
    assert image(3, False) != image(0, False)


def test_a_library_for_another_triple_is_refused_by_the_tools_backend(tmp_path, monkeypatch):
    monkeypatch.delenv(OPT_ENVIRONMENT, raising=False)
    library = _library(tmp_path, "amdgcn-amd-amdhsa")
    options = CompileOptions(link_bitcode=(str(library),), cache=False)
    with pytest.raises(OffloadError, match=r"is for 'amdgcn-amd-amdhsa', not for sm_80 \(nvptx64-nvidia-cuda\)"):
        compile_device(load_program(str(FEATURES)), parse_offload_arch("sm_80"), options, jobs=1)
    text = tmp_path / "broken.ll"
    text.write_text("this is not IR\n")
    with pytest.raises(OffloadError, match="--link-bitcode '.*broken.ll' is not valid LLVM bitcode or IR"):
        compile_device(
            load_program(str(FEATURES)),
            parse_offload_arch("sm_80"),
            CompileOptions(link_bitcode=(str(text),), cache=False),
            jobs=1,
        )


@pytest.mark.parametrize("backend", ["llvm-tools", "llvmlite"])
def test_every_stage_is_dumped_and_the_last_is_the_image(tmp_path, monkeypatch, backend):
    if backend == "llvmlite":
        monkeypatch.setenv(OPT_ENVIRONMENT, "llvmlite")
    else:
        monkeypatch.delenv(OPT_ENVIRONMENT, raising=False)
    folder = tmp_path / "stages"
    folder.mkdir()
    options = CompileOptions(link_bitcode=(str(_library(tmp_path)),), device_stage_folder=str(folder))
    (image,) = compile_device(load_program(str(FEATURES)), parse_offload_arch("sm_80"), options, jobs=1)
    names = sorted(p.name for p in folder.iterdir())
    stages = [stage for stage in STAGES if stage != "lowered"]
    assert [n for n in names if not n.startswith("features.sm_80.lowered-")] == sorted(
        f"features.sm_80.{stage}.bc" for stage in stages
    )
    lowered = [n for n in names if n.startswith("features.sm_80.lowered-")]
    assert lowered and all(n.endswith(".ll") for n in lowered)
    assert (folder / "features.sm_80.optimized.bc").read_bytes() == image.bitcode


def test_the_skeleton_is_the_only_place_the_stages_are_ordered():
    """The backends define steps; neither calls another step (one skeleton, not two drifting ones)."""
    for backend in ("llvm_tools.py", "llvmlite_backend.py"):
        text = (REPO / "offload" / "device" / backend).read_text()
        for step in ("link_user_bitcode(", "link_libraries(", "plan_libraries(", "check_unresolved("):
            calls = text.count(f".{step}") + text.count(f" {step}") - text.count(f"def {step}")
            assert calls == 0, (backend, step)
