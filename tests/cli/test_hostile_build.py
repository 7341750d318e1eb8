"""Hostile and careless input on the build side: outputs that name an input, side outputs
that cannot be written, deep nesting, and a failed link over an existing executable."""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import REPO, require_tool, run_cli

SAXPY = REPO / "examples" / "saxpy.mlir"


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() if p.is_file() else b"<dir>" for p in folder.rglob("*")}


def one_error_line(proc) -> str:
    lines = proc.stderr.splitlines()
    assert proc.returncode == 1 and len(lines) == 1 and ": error: " in lines[0], proc.stderr
    return lines[0]


def test_dependency_file_naming_the_program_is_refused(tmp_path):
    shutil.copy(SAXPY, tmp_path / "a.mlir")
    before = snapshot(tmp_path)
    line = one_error_line(
        run_cli("compile", "a.mlir", "--offload-arch", "sm_80", "-MD", "-MF", "a.mlir", "-o", "a.bc", cwd=tmp_path)
    )
    assert "a.mlir" in line
    assert snapshot(tmp_path) == before  # the program intact, no bundle


def test_ptx_side_file_naming_the_program_is_refused(tmp_path):
    shutil.copy(SAXPY, tmp_path / "b.o.sm_80.ptx")  # the PTX file compile would write beside b.o
    before = snapshot(tmp_path)
    one_error_line(
        run_cli("compile", "b.o.sm_80.ptx", "--offload-arch", "sm_80", "--portable", "-o", "b.o", cwd=tmp_path)
    )
    assert snapshot(tmp_path) == before


def test_a_side_output_that_cannot_be_written_leaves_no_bundle(tmp_path):
    shutil.copy(SAXPY, tmp_path / "a.mlir")
    (tmp_path / "b.o.sm_80.ptx").mkdir()  # where the PTX file would go stands a folder
    before = snapshot(tmp_path)
    line = one_error_line(
        run_cli("compile", "a.mlir", "--offload-arch", "sm_80", "--portable", "-o", "b.o", cwd=tmp_path)
    )
    assert "b.o.sm_80.ptx" in line
    assert snapshot(tmp_path) == before  # nor the bundle: all or nothing


def test_deep_nesting_is_a_located_error_not_a_stack_overflow(tmp_path):
    ifs = ["func.func @f(%c: i1) {", *["scf.if %c {"] * 5000, *["}"] * 5000, "return", "}"]
    (tmp_path / "ifs.mlir").write_text("module {\n" + "\n".join(ifs) + "\n}\n")
    (tmp_path / "attrs.mlir").write_text("module attributes {x.a = " + "[" * 100000 + "]" * 100000 + "} {\n}\n")
    for name in ("ifs.mlir", "attrs.mlir"):
        line = one_error_line(run_cli("compile", name, "--offload-arch", "sm_80", "-o", "x.bc", cwd=tmp_path))
        assert line.startswith(f"{name}:") and "nesting deeper than" in line
    assert not (tmp_path / "x.bc").exists()


def test_a_failed_link_leaves_the_previous_executable(tmp_path):
    require_tool("clang-22", 22)
    assert run_cli("compile", str(SAXPY), "--offload-arch", "sm_80", "-o", "s.bc", cwd=tmp_path).returncode == 0
    (tmp_path / "app").write_bytes(b"the previous executable")
    proc = run_cli("link", "s.bc", "-o", "app", "-lno_such_library_anywhere", cwd=tmp_path)
    assert proc.returncode == 1
    assert (tmp_path / "app").read_bytes() == b"the previous executable"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["app", "s.bc"]  # no temporary left behind


def test_deep_type_nesting_in_angle_brackets_is_refused(tmp_path):
    (tmp_path / "types.mlir").write_text(
        "module attributes {x.a = " + "tuple<" * 100000 + "i8" + ">" * 100000 + "} {\n}\n"
    )
    line = one_error_line(run_cli("compile", "types.mlir", "--offload-arch", "sm_80", "-o", "x.bc", cwd=tmp_path))
    assert line.startswith("types.mlir:1:") and "nesting deeper than" in line


def test_damaged_mlir_bytecode_is_one_error(tmp_path):
    mlir_opt = require_tool("mlir-opt-22", 22)
    import subprocess

    subprocess.run([mlir_opt, "--emit-bytecode", str(SAXPY), "-o", str(tmp_path / "s.mlirbc")], check=True)
    data = bytearray((tmp_path / "s.mlirbc").read_bytes())
    data[len(data) // 2 : len(data) // 2 + 8] = b"\xff" * 8
    (tmp_path / "bad.mlirbc").write_bytes(bytes(data))
    line = one_error_line(run_cli("compile", "bad.mlirbc", "--offload-arch", "sm_80", "-o", "x.bc", cwd=tmp_path))
    assert "bad.mlirbc" in line and not (tmp_path / "x.bc").exists()


# ---- outputs resolved and compared before anything is written -------------------------------------

import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

import pytest  # noqa: E402


@pytest.mark.parametrize("spelling", ["./a.bc", "sub/../a.bc", "link-to-a.bc"])
@pytest.mark.parametrize("exists", [False, True])
def test_dependency_file_naming_the_bundle_in_another_spelling_is_refused(tmp_path, spelling, exists):
    shutil.copy(SAXPY, tmp_path / "p.mlir")
    (tmp_path / "sub").mkdir()
    os.symlink("a.bc", tmp_path / "link-to-a.bc")
    if exists:
        (tmp_path / "a.bc").write_bytes(b"the previous bundle")
    before = snapshot(tmp_path)
    line = one_error_line(
        run_cli("compile", "p.mlir", "--offload-arch", "sm_80", "-MD", "-MF", spelling, "-o", "a.bc", cwd=tmp_path)
    )
    assert "same file" in line, line
    assert snapshot(tmp_path) == before and os.path.islink(tmp_path / "link-to-a.bc")


def test_an_output_linked_to_standard_output_is_written_through(tmp_path):
    shutil.copy(SAXPY, tmp_path / "p.mlir")
    os.symlink("/proc/self/fd/1", tmp_path / "out")
    # Standard output a regular file: the case that replaced the link.
    with open(tmp_path / "captured", "wb") as captured:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "offload",
                "compile",
                "p.mlir",
                "--offload-arch",
                "sm_80",
                "-o",
                "a.bc",
                "-MD",
                "-MF",
                "out",
            ],
            cwd=tmp_path,
            stdout=captured,
            stderr=subprocess.PIPE,
            text=True,
        )
    assert done.returncode == 0, done.stderr
    assert os.path.islink(tmp_path / "out") and os.readlink(tmp_path / "out") == "/proc/self/fd/1"
    assert (tmp_path / "captured").read_text().startswith("a.bc: p.mlir")
    emitted = subprocess.run(
        [sys.executable, "-m", "offload", "compile", "p.mlir", "--offload-arch", "sm_80", "-S", "-o", "out"],
        cwd=tmp_path,
        capture_output=True,
    )
    assert emitted.returncode == 0 and b"target triple" in emitted.stdout, emitted.stderr
    assert os.path.islink(tmp_path / "out")


def test_an_output_linked_to_a_device_is_refused_and_kept(tmp_path):
    shutil.copy(SAXPY, tmp_path / "p.mlir")
    os.symlink("/dev/null", tmp_path / "null")
    line = one_error_line(run_cli("compile", "p.mlir", "--offload-arch", "sm_80", "-o", "null", cwd=tmp_path))
    assert "device" in line and os.path.islink(tmp_path / "null")


def test_a_pass_writing_over_the_input_is_refused(tmp_path):
    shutil.copy(SAXPY, tmp_path / "p.mlir")
    os.link(tmp_path / "p.mlir", tmp_path / "hard.mlir")
    before = snapshot(tmp_path)
    for name in ("p.mlir", "./p.mlir", str(tmp_path / "hard.mlir")):
        pipeline = f"builtin.module(snapshot-op-locations{{filename={name}}})"
        line = one_error_line(
            run_cli(
                "compile", "p.mlir", "--offload-arch", "sm_80", "-o", "a.bc", "--pass-pipeline", pipeline, cwd=tmp_path
            )
        )
        assert "--pass-pipeline" in line and "p.mlir" in line, line
    assert snapshot(tmp_path) == before


def test_a_failed_link_leaves_no_temporary_files_of_clang(tmp_path):
    require_tool("clang-22", 22)
    assert run_cli("compile", str(SAXPY), "--offload-arch", "sm_80", "-o", "s.bc", cwd=tmp_path).returncode == 0
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    (tmp_path / "m.c").write_text("int main(void) { return 0; }\n")  # a second main: the link fails in ld
    assert subprocess.run(["clang-22", "-c", "m.c", "-o", "m.o"], cwd=tmp_path).returncode == 0
    proc = run_cli("link", "s.bc", "m.o", "-o", "app", cwd=tmp_path, env=dict(os.environ, TMPDIR=str(temporary)))
    assert proc.returncode == 1 and ".tmp" not in proc.stderr, proc.stderr
    assert list(temporary.iterdir()) == []  # clang's device objects went into a private folder, removed
    assert (
        run_cli("link", "s.bc", "-o", "app", cwd=tmp_path, env=dict(os.environ, TMPDIR=str(temporary))).returncode == 0
    )
    assert list(temporary.iterdir()) == []


def test_a_link_error_is_not_repeated(tmp_path):
    require_tool("clang-22", 22)
    assert run_cli("compile", str(SAXPY), "--offload-arch", "sm_80", "-o", "s.bc", cwd=tmp_path).returncode == 0
    line = one_error_line(run_cli("link", "s.bc", "-o", "app", "-lno_such_library_anywhere", cwd=tmp_path))
    assert "no_such_library_anywhere" in line


# ---- one error, one line ------------------------------------------------------------------------


def test_a_bad_rename_scheme_is_a_usage_error(tmp_path):
    shutil.copy(SAXPY, tmp_path / "p.mlir")
    proc = run_cli("compile", "p.mlir", "--offload-arch", "sm_80", "--rename", "bogus", "-o", "a.bc", cwd=tmp_path)
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1 and "bogus" in proc.stderr, proc.stderr


def test_a_bad_pass_option_is_one_line_saying_why(tmp_path):
    shutil.copy(SAXPY, tmp_path / "p.mlir")
    line = one_error_line(
        run_cli(
            "compile",
            "p.mlir",
            "--offload-arch",
            "sm_80",
            "-o",
            "a.bc",
            "--pass-pipeline",
            "builtin.module(canonicalize{max-iterations=many})",
            cwd=tmp_path,
        )
    )
    assert "max-iterations" in line and "'many'" in line, line


def test_an_invalid_link_bitcode_library_is_one_error_naming_it(tmp_path):
    shutil.copy(SAXPY, tmp_path / "p.mlir")
    (tmp_path / "lib.ll").write_text("@first = alias i32, ptr @second\n@second = alias i32, ptr @first\n")
    line = one_error_line(
        run_cli(
            "compile",
            "p.mlir",
            "--offload-arch",
            "sm_80",
            "-o",
            "a.bc",
            "--no-cache",
            "--link-bitcode",
            "lib.ll",
            cwd=tmp_path,
        )
    )
    assert "--link-bitcode 'lib.ll'" in line and "internal error" not in line, line


def test_an_unusable_default_cache_warns_only_after_success(tmp_path):
    shutil.copy(SAXPY, tmp_path / "p.mlir")
    env = {k: v for k, v in os.environ.items() if k != "MLIR_OFFLOAD_CACHE_DIR"}
    env.update(HOME="/proc/no-home", XDG_CACHE_HOME="/proc/no-cache")
    (tmp_path / "lib.ll").write_text("@first = alias i32, ptr @second\n@second = alias i32, ptr @first\n")
    for failing in (["missing.mlir"], ["p.mlir", "--link-bitcode", "lib.ll"]):  # fails after the cache is opened
        one_error_line(
            run_cli("compile", *failing, "--offload-arch", "sm_80,sm_90", "-o", "a.bc", cwd=tmp_path, env=env)
        )
    proc = run_cli("compile", "p.mlir", "--offload-arch", "sm_80,sm_90", "-o", "a.bc", cwd=tmp_path, env=env)
    assert proc.returncode == 0 and len(proc.stderr.splitlines()) == 1 and "warning: " in proc.stderr, proc.stderr


@pytest.mark.parametrize("closed", ["<&-", ">&-"])
def test_a_closed_standard_stream_is_one_error(tmp_path, closed):
    shutil.copy(SAXPY, tmp_path / "p.mlir")
    args = (
        "compile - --offload-arch sm_80 -o a.bc" if closed == "<&-" else "compile p.mlir --offload-arch sm_80 -S -o -"
    )
    proc = subprocess.run(
        f"{sys.executable} -m offload {args} {closed}",
        shell=True,
        cwd=tmp_path,
        capture_output=closed == "<&-",
        stderr=subprocess.PIPE if closed != "<&-" else None,
        text=True,
    )
    line = one_error_line(proc)
    assert "closed" in line and "internal error" not in line, line


# ---- the Python API: every argument checked at the boundary, only OffloadError ---------------------

API_CASES = {
    "absolute name": lambda api, text: api.compile_text(text, "sm_80", name="/tmp/escape"),
    "folder name": lambda api, text: api.compile_text(text, "sm_80", name="../escape"),
    "name not str": lambda api, text: api.compile_text(text, "sm_80", name=3),
    "bytes text": lambda api, text: api.compile_text(text.encode(), "sm_80"),
    "unencodable text": lambda api, text: api.compile_text(text + "\udcff", "sm_80"),
    "NUL in path": lambda api, text: api.compile_file("a\0b.mlir", "sm_80"),
    "path not a path": lambda api, text: api.compile_file(3, "sm_80"),
    "opt level": lambda api, text: api.compile_text(text, "sm_80", opt_level=9),
    "inputs not paths": lambda api, text: api.link([3], "app"),
    "flags a str": lambda api, text: api.link(["s.bc"], "app", flags="-lm"),
    "cudart": lambda api, text: api.link(["s.bc"], "app", cudart="dynamic"),
    "output a folder": lambda api, text: api.link(["s.bc"], "."),
    "output the input": lambda api, text: api.link(["s.bc"], "./s.bc"),
    "NUL in input": lambda api, text: api.link(["s\0.bc"], "app"),
    "write NUL": lambda api, text: api.Bundle(b"x", "bc").write("a\0b.bc"),
    "write not a path": lambda api, text: api.Bundle(b"x", "bc").write(3),
    "write a folder": lambda api, text: api.Bundle(b"x", "bc").write("."),
    "module a str": lambda api, text: api.compile_module(text, "sm_80"),
    "link a generator": lambda api, text: api.link((p for p in ["s.bc"]), "app"),
    "arch not a list": lambda api, text: api.compile_text(text, 80),
    "bundle of text": lambda api, text: api.Bundle(text, "bc"),
    "bundle format": lambda api, text: api.Bundle(b"x", "zip"),
    "bundle PTX arch a path": lambda api, text: api.Bundle(b"x", "bc", {"../../escape": "ptx"}),
    "bundle PTX bytes": lambda api, text: api.Bundle(b"x", "bc", {"sm_80": b"ptx"}),
}


@pytest.mark.parametrize("case", API_CASES)
def test_the_api_raises_only_offload_error_in_its_own_words(tmp_path, monkeypatch, case):
    from offload import api

    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.bc").write_bytes(b"not linked here")
    before = snapshot(tmp_path)
    with pytest.raises(api.OffloadError) as caught:
        API_CASES[case](api, SAXPY.read_text())
    message = caught.value.render()
    assert "\n" not in message and "internal error" not in message and " -o" not in message, message
    assert "mlir-offload-api-" not in message and "/tmp/" not in message.replace("'/tmp/escape'", ""), message
    assert snapshot(tmp_path) == before and not Path("/tmp/escape.mlir").exists()


def test_api_messages_name_the_function_called(tmp_path, monkeypatch):
    from offload import api

    monkeypatch.chdir(tmp_path)
    for call, caller in (
        (lambda: api.compile_text("module {}", "sm_80", opt_level="2"), "compile_text"),
        (lambda: api.compile_file("p.mlir", "sm_80", opt_level="2"), "compile_file"),
    ):
        with pytest.raises(api.OffloadError) as caught:
            call()
        assert f"{caller}(): opt_level expects" in caught.value.render(), caught.value.render()


def test_api_link_takes_one_path_as_one_input(tmp_path, monkeypatch):
    from offload import api

    monkeypatch.chdir(tmp_path)
    with pytest.raises(api.OffloadError) as caught:
        api.link("missing.offload.bc", "app")  # type: ignore[arg-type]  # one path where a list belongs: the call under test
    assert "missing.offload.bc" in caught.value.render()  # the path, not its first character 'm'


def test_api_debug_output_is_deterministic_and_names_the_source(tmp_path):
    from offload import api

    text = SAXPY.read_text()
    first = api.compile_text(text, "sm_80", name="saxpy", debug=True, cache=False)
    second = api.compile_text(text, "sm_80", name="saxpy", debug=True, cache=False)
    assert first.data == second.data and b"saxpy.mlir" in first.data and b"/tmp" not in first.data
    with pytest.raises(api.OffloadError) as caught:
        api.compile_text("module {\n  bogus.op\n", "sm_80", name="mine")
    assert caught.value.render().startswith("mine.mlir:2:"), caught.value.render()


# ---- every output of compile checked against the others before the work ---------------------------


@pytest.mark.parametrize(
    "flags",
    [
        ["--portable", "-o", "b.o", "-MD", "-MF", "b.o.sm_80.ptx"],  # the make rule over the PTX file
        ["--portable", "-o", "b.o", "-ftime-trace=./b.o.sm_80.ptx"],  # the trace over the PTX file
        ["-o", "a.bc", "-ftime-trace=a.bc"],  # the trace over the bundle
        ["-o", "a.json", "-ftime-trace"],  # the trace's default name (the output's, .json) is the bundle's
        ["-o", "a.bc", "-ftime-trace=t.json", "-MD", "-MF", "t.json"],  # the trace and the rule one file
        ["-o", "a.bc", "-MD", "-MF", ""],  # an empty name: the default a.d was written
    ],
)
def test_two_outputs_of_compile_naming_one_file_are_refused(tmp_path, flags):
    shutil.copy(SAXPY, tmp_path / "p.mlir")
    for name in ("b.o", "b.o.sm_80.ptx", "a.bc", "a.json", "t.json"):
        (tmp_path / name).write_bytes(b"the previous " + name.encode())
    before = snapshot(tmp_path)
    line = one_error_line(run_cli("compile", "p.mlir", "--offload-arch", "sm_80", *flags, cwd=tmp_path))
    assert "two outputs name the same file" in line or "-MF names no file" in line, line
    assert snapshot(tmp_path) == before


def test_an_api_pass_writing_over_the_input_file_is_refused(tmp_path, monkeypatch):
    from offload import api

    monkeypatch.chdir(tmp_path)
    shutil.copy(SAXPY, tmp_path / "p.mlir")
    before = snapshot(tmp_path)
    with pytest.raises(api.OffloadError) as caught:
        api.compile_file(
            "p.mlir", "sm_80", cache=False, pass_pipeline="builtin.module(snapshot-op-locations{filename=./p.mlir})"
        )
    assert "pass_pipeline" in caught.value.render() and "p.mlir" in caught.value.render()
    assert snapshot(tmp_path) == before


# ---- careless inputs to compile and link ----------------------------------------------------------


def test_an_endless_device_is_never_read_as_a_program_or_library(tmp_path):
    shutil.copy(SAXPY, tmp_path / "p.mlir")
    for args in (
        ["/dev/zero"],
        ["p.mlir", "--link-bitcode", "/dev/zero", "--no-cache"],
        ["p.mlir", "--link-bitcode", "/dev/urandom"],
    ):  # the cache key hashed it first
        line = one_error_line(run_cli("compile", *args, "--offload-arch", "sm_80", "-o", "a.bc", cwd=tmp_path))
        assert "is a device, not a file" in line, line
    with open("/dev/zero", "rb") as zero:
        done = subprocess.run(
            [sys.executable, "-m", "offload", "compile", "-", "--offload-arch", "sm_80", "-o", "a.bc"],
            stdin=zero,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert "standard input is a device" in one_error_line(done)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.mlir"]


def test_a_folder_or_a_link_loop_as_the_program_is_one_error(tmp_path):
    (tmp_path / "d").mkdir()
    os.symlink("loop", tmp_path / "loop")
    for name, said in (("d", "is a directory"), ("loop", "symbolic links")):
        for command in ("compile", "device"):
            proc = run_cli(command, name, "--offload-arch", "sm_80", "-o", "x.bc", cwd=tmp_path)
            assert said in one_error_line(proc) and "internal error" not in proc.stderr, proc.stderr
    assert (
        run_cli(
            "compile", str(SAXPY), "--offload-arch", "sm_80", "-o", "x.bc", "--link-bitcode", "d", cwd=tmp_path
        ).returncode
        == 1
    )  # a usage error (2) before


def test_a_duplicate_definition_is_said_once(tmp_path):
    require_tool("clang-22", 22)
    assert run_cli("compile", str(SAXPY), "--offload-arch", "sm_80", "-o", "s.bc", cwd=tmp_path).returncode == 0
    line = one_error_line(run_cli("link", "s.bc", "s.bc", "-o", "app", cwd=tmp_path))  # ld's lines were printed too
    assert "'main' is defined by s.bc" in line and "multiple definition" not in line
    assert not (tmp_path / "app").exists()


@pytest.mark.parametrize("cache", [[], ["--no-cache"]])  # the LLVM tools' path and the in-process one
def test_an_invalid_link_bitcode_library_is_named_not_its_temporary_copy(tmp_path, cache):
    shutil.copy(SAXPY, tmp_path / "p.mlir")
    (tmp_path / "lib.ll").write_text("define void @f() {\n  ret i32 0\n}\n")
    line = one_error_line(
        run_cli(
            "compile",
            "p.mlir",
            "--offload-arch",
            "sm_80",
            "-o",
            "a.bc",
            *cache,
            "--link-bitcode",
            "lib.ll",
            cwd=tmp_path,
        )
    )
    assert "--link-bitcode 'lib.ll'" in line and "user.input" not in line and "/tmp" not in line, line


def test_ship_checks_the_compiles_side_files_against_the_archive(tmp_path):
    shutil.copy(SAXPY, tmp_path / "p.mlir")
    for flags in (["-ftime-trace=x.tar.gz"], ["-MD", "-MF", "./x.tar.gz"]):  # the archive replaced them, exit 0
        line = one_error_line(
            run_cli("ship", "p.mlir", "--offload-arch", "sm_80", *flags, "-o", "x.tar.gz", cwd=tmp_path)
        )
        assert "two outputs name the same file" in line, line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.mlir"]


def test_device_into_a_folder_it_cannot_make_is_one_error(tmp_path):
    shutil.copy(SAXPY, tmp_path / "p.mlir")
    os.symlink("loop", tmp_path / "loop")
    line = one_error_line(
        run_cli("device", "p.mlir", "--offload-arch", "sm_80", "--emit=bc", "-o", "loop", cwd=tmp_path)
    )
    assert "cannot create the folder 'loop'" in line, line  # was an internal error (FileExistsError)
