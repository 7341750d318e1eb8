"""A program calling MLIR's sparse tensor runtime (libmlir_c_runner_utils, which mlir-offload does not
provide: offload/formats/sparse_tensor_runtime.py) through the other commands: `ship`'s manifest, Makefile
and build.sh carry the bundle record and the target's build refuses a link that does not name the library
(and links one that does, with clang alone); `doctor --bundle` says where the library is here and how to
give it; `inspect` prints the requirement; `verify` checks that the executable's runtime functions are
defined by the library it loads; `run --link-arg` links the user's copy in one command."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from conftest import require_tool, run_cli
from ship_archive import run_make, scrubbed_env, unpack
from sparse_programs import ENTRIES, LIBGEN, MLIR_C_RUNNER_UTILS, READS_A_FILE

FUNCTION = "_mlir_ciface_createCheckedSparseTensorReader"
PIPELINE = LIBGEN % "false"


def library() -> Path:
    if not MLIR_C_RUNNER_UTILS:
        pytest.skip("no libmlir_c_runner_utils (libmlir-22, which scripts/setup installs)")
    return MLIR_C_RUNNER_UTILS[-1]


def source(tmp_path: Path) -> Path:
    path = tmp_path / "reads.mlir"
    path.write_text(READS_A_FILE)
    return path


def matrix(tmp_path: Path) -> Path:
    path = tmp_path / "a.mtx"
    lines = ["%%MatrixMarket matrix coordinate real general", f"3 4 {len(ENTRIES)}"]
    path.write_text("\n".join(lines + [f"{i} {j} {v}" for i, j, v in ENTRIES]) + "\n")
    return path


def expected() -> np.ndarray:
    a = np.zeros((3, 4))
    for i, j, v in ENTRIES:
        a[i - 1, j - 1] = v
    return a @ np.array([1.0, 2.0, 3.0, 4.0])


@pytest.fixture(scope="module")
def archive(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("ship")
    shipped = folder / "reads.tar.gz"
    done = run_cli(
        "ship", str(source(folder)), "--offload-arch", "sm_80", "--pass-pipeline", PIPELINE, "-o", str(shipped)
    )
    assert done.returncode == 0, done.stderr
    return shipped


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("compile")
    made = folder / "reads.offload.bc"
    done = run_cli(
        "compile", str(source(folder)), "--offload-arch", "sm_80", "--pass-pipeline", PIPELINE, "-o", str(made)
    )
    assert done.returncode == 0, done.stderr
    return made


def test_the_shipped_archive_carries_the_record(archive, tmp_path):
    top = unpack(archive, tmp_path / "target")
    manifest = json.loads((top / "manifest.json").read_text())
    assert manifest["sparse_tensor_runtime"] == FUNCTION and manifest["libraries"] == ["cusparse"]
    assert f"MLIR's sparse tensor runtime ({FUNCTION})" in (top / "Makefile").read_text()
    assert f"SPARSE_TENSOR_RUNTIME='{FUNCTION}'" in (top / "build.sh").read_text()


def test_the_target_build_refuses_a_link_without_the_library_and_links_one_with_it(archive, tmp_path, fake_cuda):
    require_tool("clang-22", 22)
    top = unpack(archive, tmp_path / "target")
    env = scrubbed_env(tmp_path)
    refusal = f"reads: error: the program calls MLIR's sparse tensor runtime ('{FUNCTION}': sparse_tensor.new"
    for step in ("all", "check"):
        made = run_make(top, env, step, "CLANG=clang-22", f"LDFLAGS=-L{fake_cuda.lib_dir}", "LDLIBS=-lm")
        assert made.returncode != 0 and refusal in made.stderr, made.stderr
        assert "fix: name your libmlir_c_runner_utils: make LDLIBS=" in made.stderr
    assert not (top / "reads").exists() and not (top / "reads.tmp").exists()
    given = library()
    # -l:FILE with -L (the rule `mlir-offload link` follows), and the rpath the loader needs.
    ldlibs = f"-L{given.parent} -l:{given.name} -Wl,-rpath,{given.parent}"
    made = run_make(top, env, "CLANG=clang-22", f"LDFLAGS=-L{fake_cuda.lib_dir}", f"LDLIBS={ldlibs}")
    assert made.returncode == 0, made.stderr
    assert not (tmp_path / "python-was-run").exists()
    result = fake_cuda.run(top / "reads", env={"TENSOR0": str(matrix(tmp_path))})
    assert result.returncode == 0, result.stderr
    assert len(result.calls("cusparseSpMV")) == 1
    assert "calls MLIR's sparse tensor runtime" in run_cli("verify", str(top / "reads")).stdout


def test_doctor_names_the_library_and_how_to_give_it(archive, bundle):
    require_tool("clang-22", 22)
    done = run_cli("doctor", "--bundle", str(archive), "--clang", "clang-22")
    assert f"sparse tensor runtime {FUNCTION} (libmlir_c_runner_utils)" in done.stdout
    given = library()
    assert f"libmlir_c_runner_utils, found at {given}" in done.stdout
    assert f"give it to the link: make LDLIBS='{given} -Wl,-rpath,{given.parent}'" in done.stdout
    done = run_cli("doctor", "--bundle", str(bundle), "--clang", "clang-22")
    assert f"give it to the link: mlir-offload link {bundle} {given} -Wl,-rpath,{given.parent}" in done.stdout


def test_doctor_without_the_library_is_a_problem_with_its_fix(tmp_path):
    from offload.packager.bundle import BundleRecord
    from offload.toolchain.doctor import BundleNeeds, sparse_tensor_runtime_findings

    record = BundleRecord(22, "22.1.0", "bc", ("cuda:sm_80",), sparse_tensor_runtime=FUNCTION)
    (finding,) = sparse_tensor_runtime_findings(BundleNeeds("reads", record, 22, "bitcode"), [str(tmp_path)])
    assert finding.blocking and f"({FUNCTION})" in finding.problem and f"not found in {tmp_path}" in finding.problem
    assert "libmlir-22" in finding.fix
    (tmp_path / "libmlir_c_runner_utils.so.22.1").write_bytes(b"")
    (finding,) = sparse_tensor_runtime_findings(BundleNeeds("reads", record, 22, "bitcode"), [str(tmp_path)])
    assert not finding.blocking and f"found at {tmp_path}/libmlir_c_runner_utils.so.22.1" in finding.problem
    assert not sparse_tensor_runtime_findings(
        BundleNeeds("plain", BundleRecord(22, "22.1.0", "bc", ()), 22, "bitcode"), []
    )


def test_a_manifest_naming_no_function_is_refused(archive, tmp_path):
    top = unpack(archive, tmp_path / "unpacked")
    manifest = json.loads((top / "manifest.json").read_text())
    manifest["sparse_tensor_runtime"] = "$(rm -rf ~)"
    (top / "manifest.json").write_text(json.dumps(manifest))
    done = run_cli("doctor", "--bundle", str(top))
    assert done.returncode == 1 and done.stderr.count("\n") == 1
    assert "field 'sparse_tensor_runtime' is not a function name" in done.stderr


def test_inspect_prints_the_requirement(bundle):
    done = run_cli("inspect", str(bundle))
    assert done.returncode == 0, done.stderr
    needs = f"needs         libmlir_c_runner_utils (MLIR's sparse tensor runtime: the program calls {FUNCTION})"
    assert needs in done.stdout
    (image,) = json.loads(run_cli("inspect", "--json", str(bundle)).stdout)["images"]
    assert FUNCTION in image["needs"]


def test_verify_checks_the_functions_are_defined_by_the_library_loaded(bundle, tmp_path, fake_cuda):
    clang = require_tool("clang-22", 22)
    given = library()
    exe = tmp_path / "app"
    link = ["link", str(bundle), f"-L{fake_cuda.lib_dir}", f"-L{given.parent}", f"-l:{given.name}", "-o", str(exe)]
    done = run_cli(*link)
    assert done.returncode == 0, done.stderr
    env = {**os.environ, "LD_LIBRARY_PATH": str(given.parent)}
    done = run_cli("verify", str(exe), env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"function(s), all in {given}" in done.stdout
    # A library of that name that defines none of them (first on LD_LIBRARY_PATH, as the loader takes it).
    stub = tmp_path / "stub"
    stub.mkdir()
    (stub / "other.c").write_text("int other_function(void) { return 1; }\n")
    subprocess.run(
        [clang, "-shared", "-fPIC", f"-Wl,-soname,{given.name}", str(stub / "other.c"), "-o", str(stub / given.name)],
        check=True,
    )
    done = run_cli("verify", str(exe), env={**os.environ, "LD_LIBRARY_PATH": f"{stub}:{given.parent}"})
    assert done.returncode == 1
    assert f"{stub / given.name} does not define {FUNCTION}" in done.stdout + done.stderr


def test_verify_refuses_an_executable_that_loads_no_runtime_library(tmp_path):
    clang = require_tool("clang-22", 22)
    from offload.formats.elf import read_elf
    from offload.toolchain.verify import VerifyReport, check_sparse_tensor_runtime

    # The function from another library (libother.so): the executable imports it but loads no runtime library.
    (tmp_path / "other.c").write_text(f"void *{FUNCTION}(void) {{ return 0; }}\n")
    other = tmp_path / "libother.so"
    subprocess.run([clang, "-shared", "-fPIC", str(tmp_path / "other.c"), "-o", str(other)], check=True)
    program = tmp_path / "calls.c"
    program.write_text(f"void *{FUNCTION}(void);\nint main(void) {{ return {FUNCTION}() != 0; }}\n")
    exe = tmp_path / "calls"
    subprocess.run([clang, str(program), str(other), "-o", str(exe)], check=True)
    report = VerifyReport(str(exe))
    check_sparse_tensor_runtime(str(exe), read_elf(exe.read_bytes(), str(exe)), report)
    assert report.problems == [
        f"{exe} calls MLIR's sparse tensor runtime ({FUNCTION}) but loads no libmlir_c_runner_utils: "
        "link it with the library (-lmlir_c_runner_utils or its file)"
    ]


def test_run_links_the_users_library_given_with_link_arg(tmp_path):
    program = source(tmp_path)
    given = library()
    done = run_cli(
        "run",
        str(program),
        "--emulate",
        "--pass-pipeline",
        PIPELINE,
        "--link-arg",
        str(given),
        f"--link-arg=-Wl,-rpath,{given.parent}",
        env={**os.environ, "TENSOR0": str(matrix(tmp_path))},
    )
    assert done.returncode == 0, done.stderr
    got = np.array([float(v) for v in done.stdout.strip().strip("()").split(",")])
    np.testing.assert_allclose(got, expected())


def test_run_link_arg_needs_a_value(tmp_path):
    done = run_cli("run", str(source(tmp_path)), "--emulate", "--link-arg")
    assert done.returncode == 2 and "--link-arg needs a value" in done.stderr and not done.stdout
