"""offload.api, the Python API for DSL authors: compile_text/compile_file/compile_module give the bytes
`mlir-offload compile` writes for the same flags, leave the caller's module untouched, raise OffloadError
with the command's message; link makes an executable; the DSL example of docs/python-api.md (examples/dsl/map_dsl.py)
builds its module with the MLIR bindings, compiles and links it, and its kernel runs on the fake runtime."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import REPO, require_tool, run_cli
from fakert import fake_cuda  # noqa: F401

SAXPY = REPO / "examples" / "saxpy.mlir"


def test_compile_file_and_text_match_the_command(tmp_path):
    from offload import api

    # Each compile builds its images (the project's mlir-offload.toml turns the cache off): equal bytes
    # must come from equal work, not from one cache entry.
    source = tmp_path / "saxpy.mlir"
    source.write_bytes(SAXPY.read_bytes())
    (tmp_path / "mlir-offload.toml").write_text("cache = false\n")
    done = run_cli("compile", str(source), "--offload-arch", "sm_80", "-O", "2", "-o", str(tmp_path / "cli.bc"))
    assert done.returncode == 0, done.stderr
    from_file = api.compile_file(source, "sm_80", opt_level=2)
    assert from_file.data == (tmp_path / "cli.bc").read_bytes() and from_file.suffix == ".bc"
    from_text = api.compile_text(SAXPY.read_text(), ["80"], opt_level=2, name="saxpy")
    assert from_text.data[:2] == b"BC" and from_text.host_format == "bc"
    # A second compile in the same process: LLVM types named by the first must not rename this one's.
    assert api.compile_file(source, "sm_80", opt_level=2).data == from_file.data


def test_portable_bundle_carries_its_ptx(tmp_path):
    require_tool("ptxas")
    from offload import api

    bundle = api.compile_file(SAXPY, "sm_80", portable=True)
    assert bundle.suffix == ".o" and ".target sm_80" in bundle.ptx["sm_80"]
    path = bundle.write(tmp_path / "s.o")
    assert path.read_bytes()[:4] == b"\x7fELF" and (tmp_path / "s.o.sm_80.ptx").is_file()
    with pytest.raises(api.OffloadError, match="ELF object"):
        bundle.write(tmp_path / "s.bc")


def test_compile_module_leaves_the_callers_module_alone():
    import mlir.ir as ir

    from offload import api

    with ir.Context():
        module = ir.Module.parse(SAXPY.read_text())
        before = str(module)
        bundle = api.compile_module(module, "sm_80", name="saxpy")
        assert str(module) == before
    assert bundle.data[:2] == b"BC"


def test_errors_are_offload_errors():
    from offload import api

    with pytest.raises(api.OffloadError, match="unknown CUDA architecture 'sm_1'"):
        api.compile_text(SAXPY.read_text(), "sm_1")
    with pytest.raises(api.OffloadError) as failure:
        api.compile_text("func.func @f( {", "sm_80", name="mine")
    assert failure.value.render().startswith(f"{failure.value.location.file}:1:") and \
        failure.value.location.file.endswith("mine.mlir")


def test_readme_dsl_example_builds_runs_and_links(tmp_path, fake_cuda):
    require_tool("clang-22", 22)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    out = tmp_path / "new" / "out"  # a folder that does not exist yet
    done = subprocess.run([sys.executable, str(REPO / "examples" / "dsl" / "map_dsl.py"), str(out)],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    result = fake_cuda.run(out / "axpb")
    assert result.kernels_registered() == ["axpb"]
    [launch] = result.launches()
    assert launch["kernel"] == "axpb" and launch["grid"] == [4, 1, 1] and launch["block"] == [256, 1, 1]
    page = (REPO / "docs" / "python-api.md").read_text()
    shown = page.split("# Python API for DSL authors")[1].split("```python\n")[1].split("```")[0]
    assert shown == (REPO / "examples" / "dsl" / "map_dsl.py").read_text()  # the docs show the tested code


def test_dsl_example_error_is_one_line(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    done = subprocess.run([sys.executable, str(REPO / "examples" / "dsl" / "map_dsl.py"), str(tmp_path), "sm_1"],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 1
    [line] = done.stderr.splitlines()
    assert line.startswith("mlir-offload: error: unknown CUDA architecture 'sm_1'") and "Traceback" not in done.stderr
