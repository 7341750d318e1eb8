"""A compile's settings are resolved once: flags > mlir-offload.toml (read once) > offload/config.py's KEYS
defaults, into a frozen CompilePlan that the compile stages take; no click context in library code."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from offload import config
from offload.compiler.plan import DEVICE_SETTINGS, compile_plan

pytestmark = pytest.mark.no_toolchain

PACKAGE = Path(__file__).resolve().parent.parent / "offload"


def test_plan_reads_the_toml_once_and_flags_win(tmp_path, monkeypatch):
    (tmp_path / "mlir-offload.toml").write_text('offload-arch = "sm_80"\nopt-level = 1\nftz = true\n'
                                                 'device-image = "cubin"\n')
    source = tmp_path / "app.mlir"
    source.write_text("module {}\n")
    reads = []
    real = config.load_config
    monkeypatch.setattr(config, "load_config", lambda path: reads.append(path) or real(path))
    flags = {name: None for name in ("offload_arch", *DEVICE_SETTINGS, "portable", "device_image", "host_format",
                                     "dependency_file_wanted", "dependency_file")}
    flags["opt_level"] = "2"
    plan = compile_plan(str(source), str(tmp_path / "app.offload.bc"), False, None, flags)
    assert reads == [tmp_path / "mlir-offload.toml"]
    assert [t.arch for t in plan.targets] == ["sm_80"] and plan.device.ftz is True
    assert plan.device.opt_level == 2  # the flag over the file's 1
    assert plan.device.prec_sqrt is config.default_of("prec-sqrt") is True  # neither: KEYS' default
    assert plan.build.device_image == "cubin" and plan.target_clang == 22 and plan.emit == "bc"
    assert plan.build.config_file == str(tmp_path / "mlir-offload.toml")
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.emit = "ll"


def test_no_click_context_in_library_code():
    library = [p for side in ("compiler", "serialize", "annotations", "toolchain", "packager", "formats") for p in (PACKAGE / side).rglob("*.py")]
    library += [PACKAGE / "config.py"]
    offenders = sorted(str(p.relative_to(PACKAGE)) for p in library
                       if any(word in p.read_text() for word in ("get_current_context", "pass_context")))
    assert offenders == []


def test_without_output_the_plan_names_it_from_the_formats_it_decided(tmp_path, monkeypatch):
    (tmp_path / "mlir-offload.toml").write_text('offload-arch = "sm_80"\ntarget-clang = 19\n')
    source = tmp_path / "app.mlir"
    source.write_text("module {}\n")
    reads = []
    real = config.load_config
    monkeypatch.setattr(config, "load_config", lambda path: reads.append(path) or real(path))
    flags = {"dependency_file_wanted": True}
    plan = compile_plan(str(source), None, False, None, flags)
    assert len(reads) == 1  # once, though the output's name needed the formats first
    assert (plan.bundle.host_format, plan.bundle.device_image) == ("obj", "cubin")  # clang 19 reads no LLVM 22
    assert plan.output == "app.o" and plan.build.dependency_file == "app.d"
