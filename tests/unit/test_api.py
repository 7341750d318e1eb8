"""offload.api, the Python API for DSL authors: compile_text/compile_file/compile_module give the bytes
`mlir-offload compile` writes for the same flags, leave the caller's module untouched, raise OffloadError
with the command's message; link makes an executable; the DSL example of docs/python-api.md (examples/dsl/map_dsl.py)
builds its module with the MLIR bindings, compiles and links it, and its kernel runs on the fake runtime."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from conftest import REPO, require_tool, run_cli

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
    assert failure.value.location is not None
    assert failure.value.location.file == "mine.mlir"  # the caller's name, no temporary path
    assert failure.value.render() == "mine.mlir:1:14: error: expected non-function type"


def test_a_name_with_its_suffix_is_kept_and_a_bundle_prints_short():
    from offload import api

    with pytest.raises(api.OffloadError) as failure:
        api.compile_text("func.func @f( {", "sm_80", name="bad.mlir")
    assert failure.value.render() == "bad.mlir:1:14: error: expected non-function type"  # not bad.mlir.mlir
    bundle = api.compile_text(SAXPY.read_text(), "sm_80", device_image="ptx")
    shown = repr(bundle)
    assert shown == f"<Bundle: {len(bundle.data)} bytes of bitcode, ptx for sm_80>"
    assert str(bundle) == shown and len(bundle.data) > 1000


def test_errors_speak_the_apis_keywords(tmp_path):
    from offload import api

    with pytest.raises(api.OffloadError) as failure:
        api.compile_text(SAXPY.read_text(), None)
    assert "offload_arch" in failure.value.message and "--offload-arch" not in failure.value.message
    with pytest.raises(api.OffloadError) as failure:
        api.compile_text(SAXPY.read_text(), "sm_80", pass_pipeline="no-such-anchor")
    assert failure.value.message.startswith("pass_pipeline: ")
    bundle = api.compile_text(SAXPY.read_text(), "sm_80")
    with pytest.raises(api.OffloadError) as failure:
        api.link([bundle], tmp_path / "app", cudart="dynamic")
    assert failure.value.message == 'link(): cudart expects one of "shared", "static", "none", got string "dynamic"'
    with pytest.raises(api.OffloadError) as failure:
        api.link([bundle], tmp_path / "app", clang=str(tmp_path / "no-clang"))
    assert failure.value.message == f"clang={tmp_path / 'no-clang'}: not found or not a clang"


def test_link_errors_name_bundles_by_their_place_in_inputs(tmp_path):
    require_tool("clang-22", 22)
    require_tool("ptxas")
    from offload import api

    first = api.compile_text(SAXPY.read_text(), "sm_80")
    other = api.compile_text(SAXPY.read_text(), "sm_80", target_clang=19, portable=True)
    # A compile for another clang in the same process leaves the next one's entry layout alone.
    assert api.compile_text(SAXPY.read_text(), "sm_80").data == first.data
    with pytest.raises(api.OffloadError) as failure:
        api.link([first, other], tmp_path / "app")
    message = failure.value.message
    assert message.startswith("inputs[0] (a Bundle) was made for clang 22 but inputs[1] (a Bundle) for clang 19")
    assert "target_clang" in message and "/tmp" not in message and "mlir-offload-api" not in message


def test_link_emulate_makes_an_executable_that_computes_on_the_cpu(tmp_path):
    from emulation import require_emulation

    require_emulation()
    from offload import api

    bundle = api.compile_text(SAXPY.read_text(), "sm_80")
    app = api.link([bundle], tmp_path / "app", emulate=True)
    run = subprocess.run([str(app)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and "saxpy: ok" in run.stdout  # the program checks the kernel's results
    with pytest.raises(api.OffloadError) as failure:  # clang would refuse it as '-emulate'
        api.link([bundle], tmp_path / "other", flags=["--emulate"])
    assert failure.value.message == (
        "link(): flags go to clang unchanged, and --emulate is link's own: pass emulate=True"
    )
    with pytest.raises(api.OffloadError) as failure:
        api.link([bundle], tmp_path / "other", emulate="yes")
    assert failure.value.message == 'link(): emulate expects true or false, got string "yes"'
    assert not (tmp_path / "other").exists()


def test_text_with_debug_info_is_deterministic_and_names_no_temporary_file():
    from offload import api

    first = api.compile_text(SAXPY.read_text(), "sm_80", debug=True, name="saxpy")
    again = api.compile_text(SAXPY.read_text(), "sm_80", debug=True, name="saxpy")
    assert first.data == again.data
    assert b"mlir-offload-api" not in first.data and b"saxpy.mlir" in first.data
    if shutil.which("ptxas") or os.path.isfile("/usr/local/cuda/bin/ptxas"):
        with_ptx = api.compile_text(SAXPY.read_text(), "sm_80", debug=True, name="saxpy", device_image="ptx")
        assert '.file\t1 "saxpy.mlir"' in with_ptx.ptx["sm_80"]  # the device's line table names it too


def test_readme_dsl_example_builds_runs_and_links(tmp_path, fake_cuda):
    require_tool("clang-22", 22)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    out = tmp_path / "new" / "out"  # a folder that does not exist yet
    done = subprocess.run(
        [sys.executable, str(REPO / "examples" / "dsl" / "map_dsl.py"), str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
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
    done = subprocess.run(
        [sys.executable, str(REPO / "examples" / "dsl" / "map_dsl.py"), str(tmp_path), "sm_1"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert done.returncode == 1
    [line] = done.stderr.splitlines()
    assert line.startswith("mlir-offload: error: unknown CUDA architecture 'sm_1'") and "Traceback" not in done.stderr
