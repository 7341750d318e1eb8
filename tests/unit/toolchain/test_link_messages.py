"""Link failures name their cause without -v (undefined symbol and the bundle that references it, a
kernel two bundles define and the fix, a missing library); clang's warnings pass through on success;
`-###` and `--dry-run` print the command and build nothing; --symbol-prefix NAME renames every exported
device symbol, so two bundles with the same kernel name link and both kernels register."""

from __future__ import annotations

import re

import pytest

from conftest import REPO, require_tool, run_cli
from offload import api
from offload.errors import KEYWORD, OffloadError, worded
from offload.toolchain.link_messages import failure_parts, failure_summary, read_report

DATA = REPO / "tests" / "data" / "habits"
SAXPY = REPO / "examples" / "saxpy.mlir"

# What clang 22 printed for `link a.bc b.bc` (both define main and the saxpy kernel), temporaries included.
DUPLICATE_OUTPUT = (
    "/usr/bin/ld: /tmp/b-ba03aa.o: in function `main':\n"
    "LLVMDialectModule:(.text+0x0): multiple definition of `main'; "
    "/tmp/a-538502.o:LLVMDialectModule:(.text+0x0): first defined here\n"
    "/usr/bin/ld: /tmp/b-ba03aa.o: in function `__device_stub__saxpy':\n"
    "LLVMDialectModule:(.text+0x370): multiple definition of `__device_stub__saxpy'; "
    "/tmp/a-538502.o:LLVMDialectModule:(.text+0x370): first defined here\n"
    "/usr/lib/llvm-22/bin/clang-linker-wrapper: error: 'ld' failed\n"
    "clang-22: error: linker command failed with exit code 1 (use -v to see invocation)\n"
)


def test_report_maps_temporaries_to_bundles_and_drops_consequences():
    report = read_report(DUPLICATE_OUTPUT, ["dir/a.bc", "b.bc", "-lm"])
    assert report.duplicates == {"main": ["b.bc", "dir/a.bc"], "__device_stub__saxpy": ["b.bc", "dir/a.bc"]}
    assert not any("'ld' failed" in line or "/tmp/" in line for line in report.causes)
    summary = failure_summary(report)
    assert "kernel 'saxpy' is defined by b.bc and dir/a.bc" in summary and "--symbol-prefix NAME" in summary


def test_undefined_device_function_names_the_fix():
    report = read_report(
        "nvlink error   : Undefined reference to 'scale' in "
        "'/tmp/.app.12.tmp.nvptx64.sm_80-16eeec.cubin'\n"
        "/usr/lib/llvm-22/bin/clang-nvlink-wrapper: error: 'nvlink' failed\n",
        ["a.bc"],
    )
    assert report.undefined_device == ["scale"]
    summary = failure_summary(report)
    assert summary.startswith("undefined device function 'scale': link the CUDA object that defines it")
    assert "/tmp/" not in summary


def test_unknown_message_is_shown_whole():
    report = read_report(
        "/usr/bin/ld: unrecognized option '--bogus'\nclang-22: error: linker command failed "
        "with exit code 1 (use -v to see invocation)\n",
        ["a.bc"],
    )
    assert report.causes == ["/usr/bin/ld: unrecognized option '--bogus'"]


@pytest.fixture(scope="module")
def bundles(tmp_path_factory):
    require_tool("clang-22", 22)
    tmp = tmp_path_factory.mktemp("linkmsg")
    made = {}
    for name, source, extra in (
        ("saxpy", SAXPY, ()),
        ("second", DATA / "second_saxpy.mlir", ()),
        ("second_prefixed", DATA / "second_saxpy.mlir", ("--symbol-prefix", "second")),
        ("undefined", DATA / "undefined_helper.mlir", ()),
    ):
        out = tmp / f"{name}.bc"
        done = run_cli("compile", str(source), "--offload-arch", "sm_80", "-o", str(out), *extra)
        assert done.returncode == 0, done.stderr
        made[name] = out
    return tmp, made


def test_kernel_collision_names_both_bundles_and_the_fix(bundles):
    tmp, made = bundles
    done = run_cli("link", str(made["saxpy"]), str(made["second"]), "-o", str(tmp / "clash"))
    assert done.returncode == 1
    error = done.stderr.strip().splitlines()[-1]
    assert f"kernel 'saxpy' is defined by {made['second']} and {made['saxpy']}" in error
    assert "--symbol-prefix NAME" in error and "Traceback" not in done.stderr
    assert not (tmp / "clash").exists()


def test_kernel_collision_names_bundles_named_as_compile_names_them(bundles):
    """`compile` writes NAME.offload.bc, clang's temporary object is NAME-XXXXXX.o: the message names the
    bundles, never clang's temporary files."""
    tmp, made = bundles
    first, second = tmp / "a.offload.bc", tmp / "b.offload.bc"
    first.write_bytes(made["saxpy"].read_bytes())
    second.write_bytes(made["second"].read_bytes())
    done = run_cli("link", str(first), str(second), "-o", str(tmp / "clash"))
    assert done.returncode == 1
    (error,) = done.stderr.strip().splitlines()
    assert f"kernel 'saxpy' is defined by {second} and {first}" in error
    assert not re.search(r"-[0-9a-zA-Z]{6}\.o", error), error


def test_symbol_prefix_links_and_registers_both_kernels(bundles, fake_cuda):
    tmp, made = bundles
    app = tmp / "both"
    done = run_cli("link", str(made["saxpy"]), str(made["second_prefixed"]), "-o", str(app))
    assert done.returncode == 0, done.stderr
    result = fake_cuda.run(app)
    assert {"saxpy", "second_saxpy"} <= set(result.kernels_registered())
    assert [launch["kernel"] for launch in result.launches()] == ["saxpy"]


def test_symbol_prefix_must_be_an_identifier(tmp_path):
    done = run_cli(
        "compile", str(SAXPY), "--offload-arch", "sm_80", "--symbol-prefix", "9lives", "-o", str(tmp_path / "x.bc")
    )
    assert done.returncode == 1 and "not a C identifier" in done.stderr


def test_undefined_symbol_names_the_referencing_bundle(bundles):
    tmp, made = bundles
    done = run_cli("link", str(made["undefined"]), "-o", str(tmp / "undef"))
    assert done.returncode == 1
    assert f"undefined symbol 'helper_from_elsewhere' referenced by {made['undefined']}" in done.stderr


def test_missing_library_is_named(bundles):
    tmp, made = bundles
    done = run_cli("link", str(made["saxpy"]), "-lno_such_library_here", "-o", str(tmp / "nolib"))
    assert done.returncode == 1 and "no_such_library_here" in done.stderr.strip().splitlines()[-1]


def test_warnings_pass_through_on_success(bundles):
    tmp, made = bundles
    done = run_cli("link", str(made["saxpy"]), f"-I{tmp}", "-o", str(tmp / "warned"))
    assert done.returncode == 0, done.stderr
    assert "warning: argument unused during compilation" in done.stderr


@pytest.mark.parametrize("flag", ["-###", "--dry-run"])
def test_dry_run_prints_and_builds_nothing(bundles, flag):
    tmp, made = bundles
    out = tmp / f"dry{len(flag)}"
    done = run_cli("link", str(made["saxpy"]), flag, "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert "--offload-new-driver" in done.stdout and str(made["saxpy"]) in done.stdout
    assert not out.exists()


def test_ptxas_message_is_a_cause():
    text = (
        "ptxas /tmp/a-0f1e2d.s, line 40; error   : Entry function 'k' uses too much shared data (0x20000 bytes, "
        "0xc000 max)\nptxas fatal   : Ptx assembly aborted due to errors\n"
        "/usr/lib/llvm-22/bin/clang-nvlink-wrapper: error: 'ptxas' failed\n"
        "clang-22: error: linker command failed with exit code 1 (use -v to see invocation)\n"
    )
    report = read_report(text, ["a.bc"])
    assert report.causes[0].startswith("ptxas") and "too much shared data" in report.causes[0]
    assert "'ptxas' failed" not in " ".join(report.causes)
    assert "too much shared data" in failure_summary(report)


NO_MAIN = """\
module attributes {gpu.container_module} {
  gpu.module @k { gpu.func @noop() kernel { gpu.return } }
  func.func @not_main() {
    %c1 = arith.constant 1 : index
    gpu.launch_func @k::@noop blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    return
  }
}
"""
NO_MAIN_CAUSE = "no input defines 'main': link the object that defines it, or define func.func @main in an MLIR program"


def test_emulated_link_names_the_cause_as_the_gpu_link_does(bundles):
    from emulation import require_emulation

    require_emulation()
    tmp, made = bundles
    done = run_cli("link", "--emulate", str(made["saxpy"]), str(made["second"]), "-o", str(tmp / "eclash"))
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()
    assert f"kernel 'saxpy' is defined by {made['saxpy']} and {made['second']}" in line
    assert "--symbol-prefix NAME" in line and not (tmp / "eclash").exists()
    done = run_cli("link", "--emulate", str(made["undefined"]), "-o", str(tmp / "eundef"))
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()
    assert line.endswith(f"undefined symbol 'helper_from_elsewhere' referenced by {made['undefined']}")
    assert "linker command failed" not in line


def test_missing_main_is_named_by_link_emulate_and_run(tmp_path):
    from emulation import require_emulation

    require_emulation()
    require_tool("ptxas")  # run without --emulate links for the GPU
    source = tmp_path / "nomain.mlir"
    source.write_text(NO_MAIN)
    bundle = tmp_path / "nomain.bc"
    assert run_cli("compile", str(source), "--offload-arch", "sm_80", "-o", str(bundle)).returncode == 0
    done = run_cli("link", "--emulate", str(bundle), "-o", str(tmp_path / "app"))
    assert done.returncode == 1 and done.stderr.strip().endswith(NO_MAIN_CAUSE)
    for emulate in (["--emulate"], []):
        done = run_cli("run", "nomain.mlir", "--offload-arch", "sm_80", *emulate, cwd=tmp_path)
        assert done.returncode == 1
        (line,) = done.stderr.splitlines()
        assert line.endswith(NO_MAIN_CAUSE) and "/" not in line.replace("/or", "")  # no temporary path


def test_temporary_objects_of_dotted_bundles_are_named_by_their_bundle():
    # clang compiles saxpy.offload.bc to a temporary saxpy-XXXXXX.o (the name up to its first dot).
    report = read_report(
        "/usr/bin/ld: /tmp/saxpy-281931.o: in function `__device_stub__saxpy':\n"
        "LLVMDialectModule:(.text+0x0): multiple definition of `__device_stub__saxpy'; "
        "dupk.o:(.text+0x0): first defined here\n",
        ["saxpy.offload.bc", "dupk.o"],
    )
    assert report.duplicates == {"__device_stub__saxpy": ["saxpy.offload.bc", "dupk.o"]}


def test_the_fix_names_options_as_each_front_end_spells_them():
    """The advice names compile's options as parts (Mention): the command line reads flags, the API keywords."""
    duplicate = failure_parts(read_report(DUPLICATE_OUTPUT, ["dir/a.bc", "b.bc"]))
    assert "compile one of them with symbol_prefix=NAME (" in worded(duplicate, KEYWORD)
    assert "--symbol-prefix" not in worded(duplicate, KEYWORD)
    report = read_report("nvlink error   : Undefined reference to 'scale' in 'x.cubin'\n", ["a.bc"])
    assert worded(failure_parts(report), KEYWORD).endswith("compile the bundle with link_bitcode=FILE.bc")
    assert failure_summary(report).endswith("compile the bundle with --link-bitcode FILE.bc")


def test_the_api_names_the_fix_by_keyword(bundles):
    tmp, made = bundles
    with pytest.raises(OffloadError) as raised:
        api.link([made["saxpy"], made["second"]], tmp / "clash_api")
    assert "compile one of them with symbol_prefix=NAME (" in str(raised.value)
    assert "--symbol-prefix" not in str(raised.value)
    assert not (tmp / "clash_api").exists()
