"""A compile's settings are resolved once: flags > mlir-offload.toml (read once) > the options table's
defaults (offload/options/compile.py), into a frozen CompilePlan that the compile stages take; no click context
in library code."""

from __future__ import annotations

import dataclasses

import pytest

from conftest import REPO
from offload import config
from offload.driver.plan import compile_plan
from offload.options import DEFAULTS, resolve

pytestmark = pytest.mark.no_toolchain

PACKAGE = REPO / "offload"


def record_config_reads(monkeypatch) -> list:
    """The paths config.load_config reads from now on (it still reads them)."""
    reads = []
    real = config.load_config

    def recording(path):
        reads.append(path)
        return real(path)

    monkeypatch.setattr(config, "load_config", recording)
    return reads


def test_plan_reads_the_toml_once_and_flags_win(tmp_path, monkeypatch):
    (tmp_path / "mlir-offload.toml").write_text(
        'offload-arch = "sm_80"\nopt-level = 1\nftz = true\ndevice-image = "cubin"\n'
    )
    source = tmp_path / "app.mlir"
    source.write_text("module {}\n")
    reads = record_config_reads(monkeypatch)
    resolved = resolve({"opt_level": 2}, config.project_config(str(source)))
    plan = compile_plan(str(source), str(tmp_path / "app.offload.bc"), False, resolved.options, resolved.config_file)
    assert reads == [tmp_path / "mlir-offload.toml"]
    assert [t.arch for t in plan.targets] == ["sm_80"] and plan.options.ftz is True
    assert plan.options.opt_level == 2  # the flag over the file's 1
    assert plan.options.prec_sqrt is DEFAULTS["prec_sqrt"] is True  # neither: the table's default
    assert plan.build.device_image == "cubin" and plan.target_clang == 22 and plan.emit == "bc"
    assert plan.build.config_file == str(tmp_path / "mlir-offload.toml")
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.emit = "ll"  # type: ignore[misc]  # the assignment a frozen plan refuses


def test_no_click_context_in_library_code():
    library = [
        p
        for side in ("driver", "device", "host", "toolchain", "packager", "formats")
        for p in (PACKAGE / side).rglob("*.py")
    ]
    library += [PACKAGE / "config.py"]
    offenders = sorted(
        str(p.relative_to(PACKAGE))
        for p in library
        if any(word in p.read_text() for word in ("get_current_context", "pass_context"))
    )
    assert offenders == []


def test_without_output_the_plan_names_it_from_the_formats_it_decided(tmp_path, monkeypatch):
    (tmp_path / "mlir-offload.toml").write_text('offload-arch = "sm_80"\ntarget-clang = 19\n')
    source = tmp_path / "app.mlir"
    source.write_text("module {}\n")
    reads = record_config_reads(monkeypatch)
    resolved = resolve({"dependency_file_wanted": True}, config.project_config(str(source)))
    plan = compile_plan(str(source), None, False, resolved.options, resolved.config_file)
    assert len(reads) == 1  # once, though the output's name needed the formats first
    assert (plan.bundle.host_format, plan.bundle.device_image) == ("obj", "cubin")  # clang 19 reads no LLVM 22
    assert plan.output == "app.o" and plan.build.dependency_file == "app.d"
