"""What nvcc and clang users type next: their spellings of compile's options give the same bundle as
mlir-offload's; options with no meaning for an MLIR program are refused in one line naming mlir-offload's way;
response files, MLIR_OFFLOAD_PREPEND/APPEND_FLAGS, `COMMAND --version`, --offload-arch=native, `-c -o x.o`."""

from __future__ import annotations

import os
import stat

import pytest

from conftest import REPO, run_cli, stderr_on_terminal

SAXPY = REPO / "examples" / "saxpy.mlir"


def bundle_of(tmp_path, name, *flags, env=None):
    done = run_cli("compile", str(SAXPY), *flags, "-o", str(tmp_path / name), env=env)
    assert done.returncode == 0, done.stderr
    return (tmp_path / name).read_bytes(), done.stdout


@pytest.mark.parametrize(
    "theirs, ours",
    [
        (["-arch=sm_80"], ["--offload-arch", "sm_80"]),
        (["-arch", "sm_80", "-c"], ["--offload-arch", "sm_80"]),
        (["--gpu-architecture=sm_80"], ["--offload-arch", "sm_80"]),
        (["--cuda-gpu-arch", "sm_80"], ["--offload-arch", "sm_80"]),
        (
            ["-gencode", "arch=compute_80,code=sm_80", "-gencode=arch=compute_90,code=[sm_90,compute_90]"],
            ["--offload-arch", "sm_80,sm_90"],
        ),
        (["--generate-code", "arch=compute_80,code=compute_80"], ["--offload-arch", "compute_80"]),
        (["-arch=sm_80", "--use_fast_math"], ["--offload-arch", "sm_80", "--fast-math"]),
        (
            ["-arch=sm_80", "-ftz=true", "-prec-div=false", "--prec-sqrt=false"],
            ["--offload-arch", "sm_80", "--ftz", "--no-prec-div", "--no-prec-sqrt"],
        ),
        (["-arch=sm_80", "-rdc=true"], ["--offload-arch", "sm_80", "-fgpu-rdc"]),
        (["-arch=sm_80", "-dc"], ["--offload-arch", "sm_80", "-fgpu-rdc"]),
        (["-arch=sm_80", "-Ofast"], ["--offload-arch", "sm_80", "-O3", "--fast-math"]),
        (["-arch=sm_80", "-g", "-g0"], ["--offload-arch", "sm_80"]),
        (["-arch=sm_80", "--generate-line-info"], ["--offload-arch", "sm_80", "-lineinfo"]),
        (["-arch=sm_80", "--device-debug"], ["--offload-arch", "sm_80", "-G"]),
        (["-arch=sm_80", "--cuda-noopt-device-debug"], ["--offload-arch", "sm_80", "-G"]),
        (["-arch=sm_80", "-dlto", "--threads", "2"], ["--offload-arch", "sm_80"]),
    ],
)
def test_their_spelling_gives_our_bundle(tmp_path, theirs, ours):
    if "compute_80" in ours:
        from conftest import require_tool

        require_tool("ptxas")  # PTX only: compile assembles it
    assert bundle_of(tmp_path, "theirs.bc", *theirs) == bundle_of(tmp_path, "ours.bc", *ours)


def test_xptxas_v_is_resource_usage(tmp_path):
    from conftest import require_tool

    require_tool("ptxas")
    flags = ["--device-image=cubin", "--host-format=obj"]
    theirs = bundle_of(tmp_path, "t.o", "-arch=sm_80", "-Xptxas", "-v", *flags)
    assert theirs == bundle_of(tmp_path, "o.o", "--offload-arch", "sm_80", "--resource-usage", *flags)
    assert theirs[1].startswith("sm_80 saxpy: ") and "registers" in theirs[1]
    assert bundle_of(tmp_path, "p.o", "-arch=sm_80", "--ptxas-options=-v", *flags)[1] == theirs[1]


@pytest.mark.no_toolchain
@pytest.mark.parametrize(
    "flags, way",
    [
        (["-DN=4"], "no preprocessor"),
        (["-I", "include"], "includes no files"),
        (["-Iinclude"], "includes no files"),
        (["-Wall"], "no warning options"),
        (["-w"], "no warning options"),
        (["-std=c++17"], "no language standard"),
        (["-x", "cuda"], "always MLIR"),
        (["-Os"], "-O2"),
        (["--maxrregcount=32"], "nvvm.maxnreg"),
        (["-maxrregcount", "32"], "nvvm.maxnreg"),
        (["-Xptxas", "-O3"], "--resource-usage"),
        (["-###"], "-v prints each stage"),
        (["--dryrun"], "-v prints each stage"),
        (["--cuda-device-only"], "mlir-offload device"),
        (["-emit-llvm"], "mlir-offload device"),
        (["-E"], "no preprocessor"),
        (["-M"], "-MD"),
        (["-run"], "mlir-offload run"),
        (["--expt-relaxed-constexpr"], "C++ language option"),
        (["--std=c++17"], "no language standard"),
        (["-odir", "out"], "-o DIR/NAME"),
        (["-fPIC"], "mlir-offload link"),
        (["-Xcompiler", "-Wall"], "mlir-offload link"),
        (["-ccbin", "g++"], "--clang PATH"),
        (["-lm"], "mlir-offload link"),
        (["--cudart=static"], "mlir-offload link --cudart"),
        (["--cuda-path=/opt/cuda"], "CUDA_PATH=DIR"),
        (["-arch=all"], "name the archs"),
        (["-code=sm_80"], "--offload-arch"),
        (["--keep-dir", "kept"], "-save-temps=obj"),
        (["-time", "t.csv"], "-ftime-trace"),
        (["-ftz=maybe"], "true or false"),
        (["-gencode", "arch=compute_80,cod=sm_80"], "arch=compute_XX,code=sm_XX"),
    ],
)
def test_meaningless_options_are_refused_naming_the_way(tmp_path, flags, way):
    done = run_cli("compile", str(SAXPY), "--offload-arch", "sm_80", *flags, "-o", str(tmp_path / "x.bc"))
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("mlir-offload: error: ") and way in line, line
    assert not (tmp_path / "x.bc").exists()


@pytest.mark.no_toolchain
def test_unknown_and_extra_words_are_named_as_written(tmp_path):
    done = run_cli("compile", str(SAXPY), "--offload-arch", "sm_80", "-fbogus", "-o", str(tmp_path / "x.bc"))
    assert done.returncode == 2 and "unknown option '-fbogus'" in done.stderr  # not click's '-f'
    done = run_cli("compile", str(SAXPY), "other.mlir", "--offload-arch", "sm_80")
    assert done.returncode == 2
    assert "compile takes one program (other.mlir is another)" in done.stderr and "mlir-offload link" in done.stderr
    # Our own options' values are never read as foreign options.
    done = run_cli(
        "compile", str(SAXPY), "--offload-arch", "sm_80", "--pass-pipeline", "-DX", "-o", str(tmp_path / "y")
    )
    assert done.returncode == 1 and "--pass-pipeline" in done.stderr


def test_device_takes_the_same_spellings(tmp_path):
    done = run_cli("device", str(SAXPY), "-arch=sm_80", "-o", str(tmp_path / "a.bin"))
    assert done.returncode == 0, done.stderr
    done = run_cli("device", str(SAXPY), "--offload-arch", "sm_80", "-o", str(tmp_path / "b.bin"))
    assert (tmp_path / "a.bin").read_bytes() == (tmp_path / "b.bin").read_bytes()


def test_response_files_and_environment_flags(tmp_path):
    expected, _ = bundle_of(tmp_path, "plain.bc", "--offload-arch", "sm_80", "-O2")
    (tmp_path / "arch.rsp").write_text('--offload-arch "sm_80"\n@' + str(tmp_path / "opt.rsp") + "\n")
    (tmp_path / "opt.rsp").write_text("-O2")
    done = run_cli("compile", str(SAXPY), f"@{tmp_path / 'arch.rsp'}", "-o", str(tmp_path / "r.bc"))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "r.bc").read_bytes() == expected
    (tmp_path / "loop.rsp").write_text(f"@{tmp_path / 'loop.rsp'}")
    done = run_cli("compile", f"@{tmp_path / 'loop.rsp'}")
    assert done.returncode == 2 and "nest deeper" in done.stderr and len(done.stderr.splitlines()) == 1
    env = dict(os.environ, MLIR_OFFLOAD_PREPEND_FLAGS="--offload-arch sm_80", MLIR_OFFLOAD_APPEND_FLAGS="-O2")
    assert bundle_of(tmp_path, "e.bc", env=env)[0] == expected
    done = run_cli("compile", str(SAXPY), env=dict(os.environ, MLIR_OFFLOAD_APPEND_FLAGS="'open"))
    assert done.returncode == 2 and "MLIR_OFFLOAD_APPEND_FLAGS" in done.stderr
    # Not for commands that take no compile options.
    done = run_cli("inspect", str(tmp_path / "e.bc"), env=dict(os.environ, MLIR_OFFLOAD_APPEND_FLAGS="--bogus"))
    assert done.returncode == 0, done.stderr


@pytest.mark.no_toolchain
@pytest.mark.parametrize("words", [["compile", "--version"], ["-V"], ["link", "--version"]])
def test_version_wherever_asked(words):
    done = run_cli(*words)
    assert done.returncode == 0 and done.stdout.startswith("mlir-offload ") and "LLVM" in done.stdout


def fake_tools(folder, **outputs):
    folder.mkdir()
    for name, text in outputs.items():
        script = folder / name
        script.write_text(f"#!/bin/sh\nprintf '{text}'\n")
        script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return dict(os.environ, PATH=f"{folder}{os.pathsep}{os.environ['PATH']}")


def test_offload_arch_native(tmp_path):
    env = fake_tools(tmp_path / "gpu", **{"offload-arch": "sm_90\\nsm_90\\n"})
    assert (
        bundle_of(tmp_path, "n.bc", "--offload-arch=native", env=env)[0]
        == bundle_of(tmp_path, "s.bc", "--offload-arch", "sm_90")[0]
    )
    env = fake_tools(
        tmp_path / "none", **{tool: "" for tool in ("offload-arch", "nvptx-arch", "amdgpu-arch", "nvidia-smi")}
    )
    done = run_cli("compile", str(SAXPY), "--offload-arch=native", "-o", str(tmp_path / "x.bc"), env=env)
    assert done.returncode == 1
    [line] = done.stderr.splitlines()
    assert "--offload-arch=native: no GPU found on this machine" in line and "--offload-arch sm_80" in line


def test_c_dash_o_object_is_an_elf_object(tmp_path):
    data, _ = bundle_of(tmp_path, "s.o", "-c", "-arch=sm_80")
    assert data[:4] == b"\x7fELF"
    done = run_cli("inspect", str(tmp_path / "s.o"))
    assert done.returncode == 0 and "mlir-offload.host=obj" in done.stdout
    # Also for emulation: the emulated link takes the object.
    bundle_of(tmp_path, "e.o", "-c", "-arch=sm_80", "--emulate")
    from conftest import require_tool

    require_tool("clang-22", 22)
    done = run_cli("link", "--emulate", str(tmp_path / "e.o"), "-o", str(tmp_path / "emulated"))
    assert done.returncode == 0, done.stderr
    import subprocess

    ran = subprocess.run([str(tmp_path / "emulated")], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0 and ran.stdout.endswith("saxpy: ok\n")


def test_link_reads_nvcc_spellings_and_refuses_compile_options(tmp_path):
    from conftest import require_tool

    require_tool("clang-22", 22)
    bundle_of(tmp_path, "s.bc", "-arch=sm_80")

    def link(*words):
        return run_cli("link", "s.bc", *words, "-###", "-o", "app", cwd=tmp_path)

    done = link("-Xptxas", "-v")
    assert done.returncode == 0 and "-Xoffload-linker-nvptx64-nvidia-cuda -v" in done.stdout
    assert "-Xptxas" not in done.stdout
    assert link("--ptxas-options=-v").stdout == done.stdout
    done = link("-rdc=true", "--dryrun")  # the new driver always links device code relocatably
    assert done.returncode == 0 and "rdc" not in done.stdout
    assert "-Xlinker -c" in link("-Xlinker", "-c").stdout  # the linker's word, not link's -c
    assert " -fopenmp -Wall " in link("-Xcompiler", "-fopenmp,-Wall").stdout  # clang is the host compiler
    assert "-lcudart_static -ldl" in link("-cudart=static").stdout

    for words, way in (
        (["-arch=sm_90"], "the archs its bundles were compiled for"),
        (["--offload-arch", "sm_90"], "the archs its bundles were compiled for"),
        (["-c"], "link makes an executable"),
        (["--use_fast_math"], "mlir-offload compile IN.mlir ... --use_fast_math"),
        (["-maxrregcount=32"], "compile's option"),
        (["-ccbin", "g++"], "--clang PATH"),
    ):
        done = link(*words)
        assert done.returncode == 2, done.stderr
        [line] = done.stderr.splitlines()
        assert line.startswith("mlir-offload: error: ") and way in line, line
    done = run_cli("link", "s.bc", "-###", cwd=tmp_path)  # no -o: a.out, as clang's and nvcc's
    assert done.returncode == 0 and done.stdout.rstrip().endswith("-o a.out"), done.stderr
    (tmp_path / "k.cu").write_text("__global__ void k() {}\n")
    done = run_cli("link", "s.bc", "k.cu", "--offload-arch", "sm_80", "-###", "-o", "app", cwd=tmp_path)
    assert done.returncode == 0 and "--offload-arch sm_80" in done.stdout  # clang's, for the CUDA source


@pytest.mark.no_toolchain
@pytest.mark.parametrize(
    "command",
    [
        "compile",
        "link",
        "run",
        "verify",
        "ship",
        "device",
        "package",
        "inspect",
        "extract",
        "config",
        "doctor",
        "cache",
    ],
)
def test_every_command_has_help(command):
    for flag in ("--help", "-h"):
        done = run_cli(command, flag)
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith(f"Usage: mlir-offload {command}") and done.stderr == ""


def test_ship_hands_nvcc_spellings_to_compile(tmp_path):
    import json
    import tarfile

    done = run_cli("ship", str(SAXPY), "-arch=sm_80", "-o", str(tmp_path / "app.tar.gz"))
    assert done.returncode == 0, done.stderr  # click once read -arch as -a -r -c -h: help, and nothing built
    with tarfile.open(tmp_path / "app.tar.gz") as archive:
        member = archive.extractfile("app/manifest.json")
        assert member is not None
        manifest = json.load(member)
    assert [target["arch"] for target in manifest["targets"]] == ["sm_80"]
    done = run_cli("ship", str(SAXPY), "-arch=sm_80", "-DX", "-o", str(tmp_path / "b.tar.gz"))
    assert done.returncode == 2 and "no preprocessor" in done.stderr and not (tmp_path / "b.tar.gz").exists()


def test_binary_output_is_not_written_to_a_terminal(tmp_path):
    """`-o -` on a terminal is refused as LLVM's tools refuse it; -S (text) and a pipe are fine."""
    import subprocess
    import sys
    import threading

    env = dict(os.environ, PYTHONPATH=str(REPO))
    leader, follower = os.openpty()
    shown = []

    def drain():  # the terminal's reader: a full pty buffer would block the writer
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                return
            if not chunk:
                return
            shown.append(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:

        def on_terminal(*words):
            return subprocess.run(
                [sys.executable, "-m", "offload", *words],
                stdout=follower,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
                cwd=tmp_path,
                timeout=300,
            )

        done = on_terminal("compile", str(SAXPY), "-arch=sm_80", "-o", "-")
        assert done.returncode == 1 and "not writing a binary bundle to a terminal" in done.stderr
        assert on_terminal("compile", str(SAXPY), "-arch=sm_80", "-S", "-o", "-").returncode == 0
    finally:
        os.close(follower)
        reader.join(timeout=10)
        os.close(leader)
    assert b"define" in b"".join(shown)  # the -S text reached the terminal
    piped = subprocess.run(
        [sys.executable, "-m", "offload", "compile", str(SAXPY), "-arch=sm_80", "-o", "-"],
        capture_output=True,
        env=env,
        timeout=300,
    )
    assert piped.returncode == 0 and piped.stdout.startswith(b"BC")


def test_bundle_named_like_an_executable_gets_a_note_on_a_terminal(tmp_path):
    """nvcc's `-o app` makes an executable: on a terminal compile says its `app` is a bundle and how to link
    it; in a pipe (make, ship's compile) nothing is added."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    status, stderr = stderr_on_terminal(["compile", str(SAXPY), "-arch=sm_80", "-o", "app"], env, cwd=tmp_path)
    shown = stderr.decode()
    assert status == 0 and (tmp_path / "app").read_bytes()[:2] == b"BC"
    assert "'app' will be a bundle, not an executable: mlir-offload link app -o APP" in shown
    piped = run_cli("compile", str(SAXPY), "-arch=sm_80", "-o", "app2", cwd=tmp_path)
    assert piped.returncode == 0 and piped.stderr == ""
