"""Grace Hopper (aarch64) hosts, end to end on this x86-64 machine with Debian's real parts: bundles
compiled with --host-triple aarch64-linux-gnu, linked by clang-22 --target=aarch64-linux-gnu against the
aarch64 cross sysroot and the fake CUDA runtime built by aarch64-linux-gnu-gcc, run under qemu-aarch64.
The fake runtime (built for aarch64, so it reads the launch arguments as AAPCS64 passes them) logs
registrations, launch configurations, streams and argument bytes, asserted exactly here."""

from __future__ import annotations

import struct
import subprocess

import pytest

from conftest import REPO, require_tool, run_cli
from fakert import arg_f32, arg_f64, arg_i32, arg_i64, arg_ptr, ptr_value

SAXPY = REPO / "examples" / "saxpy.mlir"
GLOBALS_STREAMS = REPO / "tests" / "data" / "hosts" / "globals_streams.mlir"
AARCH64 = "aarch64-linux-gnu"


def compile_bundle(source, out, host: str = AARCH64, *flags: str):
    done = run_cli(
        "compile", str(source), "--offload-arch", "sm_80,sm_90", "--host-triple", host, *flags, "-o", str(out)
    )
    assert done.returncode == 0, done.stderr
    return out


def link(bundle, app, runtime, *flags: str):
    require_tool("clang-22", 22)
    done = run_cli("link", str(bundle), *flags, f"-L{runtime.lib_dir}", "--clang", "clang-22", "-o", str(app))
    assert done.returncode == 0, done.stderr
    verified = run_cli("verify", str(app))
    assert verified.returncode == 0, verified.stdout + verified.stderr
    return app


def elf_machine(path) -> int:
    return struct.unpack_from("<H", path.read_bytes(), 0x12)[0]


def memref_words(args: list[str], start: int) -> tuple:
    """(allocated, aligned, offset, size, stride) of a 1-D memref passed as 5 kernel arguments."""
    return (
        arg_ptr(args[start]),
        arg_ptr(args[start + 1]),
        arg_i64(args[start + 2]),
        arg_i64(args[start + 3]),
        arg_i64(args[start + 4]),
    )


@pytest.mark.parametrize("linker", [[], ["-fuse-ld=lld"]], ids=["ld.bfd", "lld"])
def test_saxpy_runs_on_aarch64(tmp_path, fake_cuda_aarch64, linker):
    if linker:
        require_tool("ld.lld-22", 22)
    bundle = compile_bundle(SAXPY, tmp_path / "saxpy.offload.bc")
    app = link(bundle, tmp_path / "saxpy", fake_cuda_aarch64, f"--target={AARCH64}", *linker)
    assert elf_machine(app) == 183  # EM_AARCH64
    verified = run_cli("verify", str(app), "--host-triple", "arm64")
    assert verified.returncode == 0 and "host: aarch64-linux-gnu" in verified.stdout
    wrong = run_cli("verify", str(app), "--host-triple", "x86_64")
    assert wrong.returncode == 1 and wrong.stderr.strip() == (
        f"mlir-offload: error: {app} is an executable for aarch64-linux-gnu hosts, not x86_64-linux-gnu: compile the "
        "bundle with --host-triple x86_64-linux-gnu and link with --target=x86_64-linux-gnu"
    )
    result = fake_cuda_aarch64.run(app)
    assert result.returncode == 2 and "saxpy: MISMATCH" in result.stdout  # kernels do not run on the fake
    assert result.kernels_registered() == ["saxpy"]
    x, y = [ptr_value(call["ptr"]) for call in result.calls("cudaMalloc")]
    (launch,) = result.launches()
    assert (launch["kernel"], launch["grid"], launch["block"], launch["shared_mem"]) == (
        "saxpy",
        [4, 1, 1],
        [256, 1, 1],
        0,
    )
    assert launch["stream"] == result.calls("cudaStreamCreate")[0]["stream"]
    args = launch["args"]
    assert len(args) == 12 and arg_f32(args[0]) == 2.0
    assert memref_words(args, 1) == (x, x, 0, 1024, 1) and memref_words(args, 6) == (y, y, 0, 1024, 1)
    assert arg_i64(args[11]) == 1024


def normalised(result) -> list[dict]:
    """The log without what differs between two processes: the process id, the kernel handles, and each
    pointer (fields and argument bytes) named by the allocation it is (host buffers stay "host")."""
    allocations = {ptr_value(c["ptr"]): f"allocation {i}" for i, c in enumerate(result.calls("cudaMalloc"))}
    events = []
    for event in result.events:
        event = {k: v for k, v in event.items() if k not in ("pid", "handle")}
        for key in ("ptr", "dst", "src"):
            if key in event:
                event[key] = allocations.get(ptr_value(event[key]), "host")
        if "args" in event:
            event["args"] = [allocations.get(arg_ptr(a), a) if len(a) == 16 else a for a in event["args"]]
        events.append(event)
    return events


@pytest.fixture(scope="module")
def globals_streams_run(tmp_path_factory, fake_cuda_aarch64):
    tmp = tmp_path_factory.mktemp("globals-streams")
    bundle = compile_bundle(GLOBALS_STREAMS, tmp / "gs.offload.bc")
    app = link(bundle, tmp / "gs", fake_cuda_aarch64, f"--target={AARCH64}")
    result = fake_cuda_aarch64.run(app)
    assert result.returncode == 0, result.stderr
    return result


def test_globals_streams_and_kernels_on_aarch64(globals_streams_run):
    result = globals_streams_run
    assert result.kernels_registered() == ["fill", "scale", "tag"]
    assert [(v["name"], v["size"]) for v in result.variables_registered()] == [("bias", 32), ("weights", 24)]
    assert result.apis() == [
        "__cudaRegisterFatBinary",
        "__cudaRegisterFunction",
        "__cudaRegisterFunction",
        "__cudaRegisterFunction",
        "__cudaRegisterVar",
        "__cudaRegisterVar",
        "__cudaRegisterFatBinaryEnd",
        "cudaStreamCreate",
        "cudaStreamCreate",
        "cudaMalloc",
        "cudaMalloc",
        "cudaEventCreate",
        "cudaEventRecord",
        "cudaMemcpyAsync",
        "cudaLaunchKernel",
        "cudaLaunchKernel",
        "cudaEventCreate",
        "cudaEventRecord",
        "cudaStreamCreate",
        "cudaStreamWaitEvent",
        "cudaStreamWaitEvent",
        "cudaEventDestroy",
        "cudaEventDestroy",
        "cudaLaunchKernel",
        "cudaMemcpyAsync",
        "cudaFree",
        "cudaFree",
        "cudaStreamSynchronize",
        "cudaStreamDestroy",
        "__cudaUnregisterFatBinary",
    ]
    s1, s2, s3 = [call["stream"] for call in result.calls("cudaStreamCreate")]
    x, tags = [ptr_value(call["ptr"]) for call in result.calls("cudaMalloc")]
    assert [c["size"] for c in result.calls("cudaMalloc")] == [960, 64]
    copy_in, copy_out = result.calls("cudaMemcpyAsync")
    assert (copy_in["stream"], ptr_value(copy_in["dst"]), copy_in["size"]) == (s1, x, 960)
    assert (copy_out["stream"], ptr_value(copy_out["src"]), copy_out["size"]) == (s3, x, 960)
    # tag waits for both streams: an event recorded on each, waited for by the stream it runs on.
    records = result.calls("cudaEventRecord")
    assert [r["stream"] for r in records] == [s2, s1]
    waits = [(w["stream"], w["event"]) for w in result.calls("cudaStreamWaitEvent")]
    assert waits == [(s3, r["event"]) for r in records]

    fill, scale, tag = result.launches()
    assert (fill["kernel"], fill["grid"], fill["block"], fill["shared_mem"], fill["stream"]) == (
        "fill",
        [3, 2, 5],
        [8, 4, 2],
        0,
        s1,
    )
    assert memref_words(fill["args"], 0) == (x, x, 0, 240, 1)
    assert arg_f32(fill["args"][5]) == 1.5 and arg_i64(fill["args"][6]) == 240
    assert (scale["kernel"], scale["grid"], scale["block"], scale["shared_mem"], scale["stream"]) == (
        "scale",
        [2, 1, 1],
        [8, 1, 1],
        256,
        s1,
    )
    assert memref_words(scale["args"], 0) == (x, x, 0, 240, 1)
    assert arg_f64(scale["args"][5]) == -2.25 and arg_i32(scale["args"][6]) == 7 and arg_i64(scale["args"][7]) == 240
    assert (tag["kernel"], tag["grid"], tag["block"], tag["shared_mem"], tag["stream"]) == (
        "tag",
        [1, 1, 1],
        [8, 1, 1],
        0,
        s3,
    )
    assert memref_words(tag["args"], 0) == (tags, tags, 0, 8, 1)
    assert tag["args"][5:] == ["efcdab8967452301", "fdff", "c8"]  # i64 0x0123456789abcdef, i16 -3, i8 200


def test_same_runtime_calls_as_on_x86_64(tmp_path, globals_streams_run, fake_cuda):
    """The x86-64 bundle of the same program, linked natively, makes the same calls with the same bytes."""
    bundle = compile_bundle(GLOBALS_STREAMS, tmp_path / "gs.offload.bc", "x86_64-linux-gnu")
    app = link(bundle, tmp_path / "gs", fake_cuda)
    assert elf_machine(app) == 62  # EM_X86_64
    result = fake_cuda.run(app)
    assert result.returncode == 0, result.stderr
    assert normalised(result) == normalised(globals_streams_run)


def test_link_refuses_a_bundle_of_another_host(tmp_path):
    require_tool("clang-22", 22)
    bundle = compile_bundle(SAXPY, tmp_path / "saxpy.offload.bc")
    done = run_cli("link", str(bundle), "--clang", "clang-22", "-o", str(tmp_path / "app"))
    assert done.returncode == 1 and not (tmp_path / "app").exists()
    assert "the bundle was built for aarch64-linux-gnu hosts but" in done.stderr
    assert "links for x86_64-linux-gnu: link with --target=aarch64-linux-gnu" in done.stderr
    assert "or recompile with --host-triple x86_64-linux-gnu" in done.stderr
    x86 = compile_bundle(SAXPY, tmp_path / "saxpy86.offload.bc", "x86_64-linux-gnu")
    done = run_cli("link", str(x86), "--clang", "clang-22", "--target=arm64-linux-gnu", "-o", str(tmp_path / "app"))
    assert done.returncode == 1 and "built for x86_64-linux-gnu hosts" in done.stderr
    assert "--host-triple aarch64-linux-gnu" in done.stderr
    done = run_cli("link", str(x86), "--clang", "clang-22", "--target=riscv64-linux-gnu", "-o", str(tmp_path / "app"))
    assert done.returncode == 1
    assert "unsupported host triple 'riscv64-linux-gnu' (supported: x86_64-linux-gnu, aarch64-linux-gnu)" in done.stderr


def test_portable_host_object_is_aarch64(tmp_path, fake_cuda_aarch64):
    """--portable: the host part is an ELF object for the host triple (llvmlite's AArch64 back end)."""
    require_tool("ptxas")
    bundle = compile_bundle(SAXPY, tmp_path / "saxpy.offload.o", AARCH64, "--portable")
    assert elf_machine(bundle) == 183
    readelf = require_tool("llvm-readelf-22", 22)
    sections = subprocess.run([readelf, "-S", "-W", str(bundle)], capture_output=True, text=True, check=True).stdout
    assert ".llvm.offloading" in sections
    app = link(bundle, tmp_path / "saxpy", fake_cuda_aarch64, f"--target={AARCH64}", "--ptx-beside")
    result = fake_cuda_aarch64.run(app)
    assert result.kernels_registered() == ["saxpy"]
    (launch,) = result.launches()
    assert (launch["grid"], launch["block"]) == ([4, 1, 1], [256, 1, 1])


@pytest.fixture(scope="module")
def shipped(tmp_path_factory):
    """The aarch64 saxpy shipped (archive made by `ship` from the .mlir) and unpacked."""
    require_tool("make")
    tmp = tmp_path_factory.mktemp("ship-aarch64")
    archive = tmp / "saxpy.tar.gz"
    done = run_cli("ship", str(SAXPY), "--offload-arch", "sm_80", "--host-triple", AARCH64, "-o", str(archive))
    assert done.returncode == 0, done.stderr
    subprocess.run(["tar", "xzf", str(archive)], cwd=tmp, check=True)
    return archive, tmp / "saxpy"


def make(folder, *variables: str):
    return subprocess.run(["make", "-C", str(folder), *variables], capture_output=True, text=True)


def test_shipped_archive_builds_with_make_for_aarch64(shipped, fake_cuda_aarch64):
    import json

    archive, folder = shipped
    assert json.loads((folder / "manifest.json").read_text())["host_triple"] == AARCH64
    require_tool("clang-22", 22)
    done = make(folder, "CLANG=clang-22", f"LDFLAGS=--target={AARCH64} -L{fake_cuda_aarch64.lib_dir}")
    assert done.returncode == 0, done.stdout + done.stderr
    app = folder / "saxpy"
    assert elf_machine(app) == 183
    result = fake_cuda_aarch64.run(app)
    assert result.kernels_registered() == ["saxpy"]
    (launch,) = result.launches()
    assert (launch["grid"], launch["block"], arg_f32(launch["args"][0]), arg_i64(launch["args"][11])) == (
        [4, 1, 1],
        [256, 1, 1],
        2.0,
        1024,
    )


def test_shipped_archive_refuses_a_link_for_another_host(shipped):
    archive, folder = shipped
    require_tool("clang-22", 22)
    done = make(folder, "CLANG=clang-22", "APP=native")
    assert done.returncode != 0 and not (folder / "native").exists() and not (folder / "native.tmp").exists()
    assert (
        "native: error: the bundle was built for aarch64-linux-gnu hosts but clang-22 links for x86_64" in done.stderr
    )
    assert "fix: cross-link with make LDFLAGS='--target=aarch64-linux-gnu ...'" in done.stderr
    doctor = run_cli("doctor", "--bundle", str(archive), "--clang", "clang-22")
    assert doctor.returncode == 1
    assert "problem: the bundle was built for aarch64-linux-gnu hosts but" in doctor.stdout
    assert "or recompile with --host-triple x86_64-linux-gnu" in doctor.stdout


@pytest.mark.parametrize("name", sorted(p.stem for p in (REPO / "tests" / "data" / "runner_utils").glob("*.mlir")))
def test_runner_utilities_print_upstreams_text_on_aarch64(tmp_path, fake_cuda_aarch64, name):
    """printMemref*/vector.print generated into an aarch64 bundle (the module's triple and data layout)
    print what upstream's mlir-runner prints (tests/unit/host/test_runner_utils.py's oracle)."""
    import os

    from test_runner_utils import PROGRAMS, mask, oracle

    program = PROGRAMS / f"{name}.mlir"
    expected = oracle(program)
    bundle = tmp_path / f"{name}.offload.bc"
    done = run_cli("compile", str(program), "--offload-arch", "sm_80", "--host-triple", AARCH64, "-o", str(bundle))
    assert done.returncode == 0, done.stderr
    app = link(bundle, tmp_path / name, fake_cuda_aarch64, f"--target={AARCH64}")
    env = dict(
        os.environ, LD_LIBRARY_PATH=str(fake_cuda_aarch64.lib_dir), FAKE_RT_LOG=os.devnull, **fake_cuda_aarch64.env
    )
    done = subprocess.run([*fake_cuda_aarch64.launcher, str(app)], capture_output=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert mask(done.stdout) == mask(expected.stdout) and done.stderr == expected.stderr
