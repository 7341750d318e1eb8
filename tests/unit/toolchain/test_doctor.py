"""`mlir-offload doctor` finds the real toolchains of this machine and says when it cannot link."""

from __future__ import annotations

from conftest import find_tool, require_tool, run_cli


def test_doctor_lists_clangs_and_cuda(clang22, clang19):
    result = run_cli("doctor")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "clang 22." in out and "clang 19." in out
    assert "clang-linker-wrapper" in out
    if find_tool("ptxas"):
        assert "ptxas ok" in out and "nvlink ok" in out and "libcudart ok" in out


def test_doctor_reports_cuda_version(clang22):
    require_tool("ptxas")
    result = run_cli("doctor", "--cuda-path", "/usr/local/cuda")
    assert result.returncode == 0
    cuda_line = next(line for line in result.stdout.splitlines() if line.startswith("CUDA"))
    version = cuda_line.split()[1]
    assert version[0].isdigit() and "." in version


def test_doctor_bad_cuda_path_says_not_found(clang22, tmp_path):
    result = run_cli("doctor", "--cuda-path", str(tmp_path))
    assert result.returncode == 0
    assert "CUDA: not found" in result.stdout


def test_doctor_reports_the_build_side_and_tolerates_its_absence(clang22, tmp_path):
    import os

    r = run_cli("doctor")
    assert r.returncode == 0, r.stderr
    assert "MLIR Python bindings (" in r.stdout and "llvmlite 0.50" in r.stdout
    # A target machine has no MLIR: doctor says so and still judges the link side.
    fake = tmp_path / "site" / "mlir"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('no MLIR here')\n")
    env = dict(os.environ, PYTHONPATH=str(tmp_path / "site"))
    r = run_cli("doctor", env=env)
    assert r.returncode == 0, r.stderr
    assert "MLIR Python bindings: not loadable (this machine can link bundles, not compile them)" in r.stdout


def test_doctor_takes_a_bundle_and_says_how_to_link_it(clang22, clang19, tmp_path):
    """A bundle (what compile writes, what link links) is judged as a shipped archive is: which clang here
    can link it, each problem with its fix in link's terms (--clang, recompile), and link's command."""
    from conftest import REPO

    saxpy = REPO / "examples" / "saxpy.mlir"
    bundle = tmp_path / "app.offload.bc"
    assert run_cli("compile", str(saxpy), "--offload-arch", "sm_80", "-o", str(bundle)).returncode == 0
    done = run_cli("doctor", "--bundle", str(bundle))
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert (
        f"bundle {bundle}: entry profile clang 22, producer LLVM 22, cuda sm_80, device images bitcode, host bc"
        in lines
    )
    assert any(line.startswith("clang 22.") and line.endswith(": can link it") for line in lines)
    assert "    fix: use clang 22 (--clang clang-22) or recompile with --target-clang 19" in lines
    assert lines[-1] == f"this machine can link {bundle}: mlir-offload link {bundle} --clang {clang22}"

    portable = tmp_path / "app.offload.o"
    flags = ("--offload-arch", "sm_80", "--target-clang", "19", "--portable", "-o", str(portable))
    assert run_cli("compile", str(saxpy), *flags).returncode == 0
    done = run_cli("doctor", "--bundle", str(portable), "--clang", clang19)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no bitcode, cuda sm_80, device images cubin, host obj" in done.stdout
    assert done.stdout.splitlines()[-1].endswith(f"mlir-offload link {portable} --clang {clang19}")


def test_doctor_names_what_it_takes_for_a_file_that_is_neither(tmp_path):
    other = tmp_path / "app.mlir"
    other.write_text("module {}\n")
    done = run_cli("doctor", "--bundle", str(other))
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"mlir-offload: error: {other}: neither a bundle (.offload.bc, .offload.o from mlir-offload compile) "
        "nor a shipped archive (.tar.gz from mlir-offload ship)"
    ]
