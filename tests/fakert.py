"""Test harness: build the fake CUDA / HIP runtimes (tests/fake_runtime/fake_runtime.c) with the system C
compiler and run executables against them, returning the runtime's JSON log as events.

Use from a test file (conftest.py loads this module as a plugin: its session-scoped fixtures fake_cuda,
fake_hip and fake_cuda_aarch64 need no import):
    def test_x(fake_cuda):
        result = fake_cuda.run(exe, env={"FAKE_RT_FAIL": "cudaMalloc"})
        assert result.kernels_registered() == ["fill", "vsqrt"]
        launch = result.launches()[0]; assert launch["grid"] == [4, 1, 1]
        assert arg_i32(launch["args"][0]) == 1024

The fake logs one JSON object per call ({"api": name, ..., "ret": code}); see fake_runtime.c for the
fields of each call. Link CUDA executables against the real /usr/local/cuda/lib64/libcudart.so (as a
user does) or against `fake_cuda.lib_dir`; at run time the fake comes first on LD_LIBRARY_PATH, and the
"loaded" event proves the fake, not the real library, was loaded. HIP executables link against
`fake_hip.lib_dir` (-lamdhip64): this machine has no HIP runtime.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from conftest import require_tool

FAKE_RUNTIME_SOURCES = Path(__file__).resolve().parent / "fake_runtime"
SOURCE = FAKE_RUNTIME_SOURCES / "fake_runtime.c"
CUDART_VERSION_SCRIPT = FAKE_RUNTIME_SOURCES / "cudart.map"
CUSPARSE_SOURCE = FAKE_RUNTIME_SOURCES / "fake_cusparse.c"
CUSPARSELT_SOURCE = FAKE_RUNTIME_SOURCES / "fake_cusparselt.c"

# Library file names as the real runtimes ship them (SONAME first, then the -l link name).
CUDA_LIBRARIES = ("libcudart.so.13", "libcudart.so")
HIP_LIBRARIES = ("libamdhip64.so.6", "libamdhip64.so")
CUSPARSE_LIBRARIES = ("libcusparse.so.12", "libcusparse.so")
HIPSPARSE_LIBRARIES = ("libhipsparse.so.1", "libhipsparse.so")
CUSPARSELT_LIBRARIES = ("libcusparseLt.so.0", "libcusparseLt.so")


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str
    events: list[dict] = field(default_factory=list)

    def calls(self, api: str) -> list[dict]:
        return [e for e in self.events if e.get("api") == api]

    def apis(self) -> list[str]:
        """The sequence of API names called (without the initial "loaded")."""
        return [e["api"] for e in self.events if e.get("api") != "loaded"]

    def kernels_registered(self) -> list[str]:
        return [e["name"] for e in self.events if e.get("api") in ("__cudaRegisterFunction", "__hipRegisterFunction")]

    def variables_registered(self) -> list[dict]:
        return [
            e
            for e in self.events
            if e.get("api")
            in ("__cudaRegisterVar", "__hipRegisterVar", "__cudaRegisterManagedVar", "__hipRegisterManagedVar")
        ]

    def launches(self) -> list[dict]:
        launch_calls = ("cudaLaunchKernel", "cudaLaunchKernelExC", "hipLaunchKernel")
        return [e for e in self.events if e.get("api") in launch_calls]

    def fatbins(self) -> list[dict]:
        return [e for e in self.events if e.get("api") in ("__cudaRegisterFatBinary", "__hipRegisterFatBinary")]


# Decoding the hex argument bytes of a launch event ("args": ["00040000", ...]).
def arg_bytes(hex_text: str) -> bytes:
    return bytes.fromhex(hex_text)


def arg_i32(hex_text: str) -> int:
    return struct.unpack("<i", arg_bytes(hex_text))[0]


def arg_i64(hex_text: str) -> int:
    return struct.unpack("<q", arg_bytes(hex_text))[0]


def arg_f32(hex_text: str) -> float:
    return struct.unpack("<f", arg_bytes(hex_text))[0]


def arg_f64(hex_text: str) -> float:
    return struct.unpack("<d", arg_bytes(hex_text))[0]


def arg_ptr(hex_text: str) -> int:
    return struct.unpack("<Q", arg_bytes(hex_text))[0]


def ptr_value(logged: str) -> int:
    """A pointer as the fake logs it ("0x55..."), as an int comparable with arg_ptr()."""
    return int(logged, 16)


def build_fake_runtimes(
    out_dir: str | os.PathLike, cc: str | None = None, runtimes: tuple[str, ...] = ("cuda", "hip")
) -> Path:
    """Build the fake runtimes into out_dir with `cc` (a cross compiler builds them for another host); returns
    out_dir. cuda: libcudart.so.13 + libcudart.so, the fake cuSPARSE (libcusparse.so.12 + libcusparse.so) and
    cuSPARSELt (libcusparseLt.so.0 + libcusparseLt.so); hip: libamdhip64.so.6 + libamdhip64.so and the fake
    hipSPARSE (libhipsparse.so.1 + libhipsparse.so)."""
    cc = cc or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        raise RuntimeError("no system C compiler (cc) to build the fake runtimes")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    common = [cc, "-shared", "-fPIC", "-O1", "-Wall", "-Werror", "-fvisibility=hidden"]
    cuda_runtime = (CUDA_LIBRARIES, [str(SOURCE), f"-Wl,--version-script={CUDART_VERSION_SCRIPT}"])
    builds = {
        "cuda": [
            cuda_runtime,
            (CUSPARSE_LIBRARIES, [str(CUSPARSE_SOURCE)]),
            (CUSPARSELT_LIBRARIES, [str(CUSPARSELT_SOURCE)]),
        ],
        "hip": [
            (HIP_LIBRARIES, [str(SOURCE), "-DFAKE_HIP"]),
            (HIPSPARSE_LIBRARIES, [str(CUSPARSE_SOURCE), "-DFAKE_HIP"]),
        ],
    }
    for (soname, link_name), arguments in [build for kind in runtimes for build in builds[kind]]:
        subprocess.run(
            [*common, *arguments, f"-Wl,-soname,{soname}", "-o", str(out / soname)],
            check=True,
            capture_output=True,
            text=True,
        )
        link = out / link_name
        if link.exists() or link.is_symlink():
            link.unlink()
        link.symlink_to(soname)
    return out


_built_dir: Path | None = None


def fake_runtime_dir() -> Path:
    """The fake runtimes, built once per process into a temporary directory."""
    global _built_dir
    if _built_dir is None:
        _built_dir = build_fake_runtimes(tempfile.mkdtemp(prefix="fake-runtimes-"))
    return _built_dir


def run_executable(
    exe: str | os.PathLike,
    runtime: str = "cuda",
    env: dict | None = None,
    args: list[str] | tuple = (),
    lib_dir: str | os.PathLike | None = None,
    timeout: int = 60,
    launcher: tuple[str, ...] = (),
) -> Result:
    """Run exe with the fake runtime first on LD_LIBRARY_PATH; return its exit status, output and log.
    `launcher` runs an executable of another CPU (qemu-aarch64). Raises AssertionError when the fake
    runtime was not the one loaded."""
    lib_dir = Path(lib_dir) if lib_dir else fake_runtime_dir()
    fd, log_path = tempfile.mkstemp(prefix="fake-rt-", suffix=".jsonl")
    os.close(fd)
    try:
        run_env = dict(os.environ)
        for key in ("FAKE_RT_FAIL", "FAKE_RT_ARG_SIZES", "FAKE_RT_DEVICE_COUNT"):
            run_env.pop(key, None)
        run_env.update(env or {})
        run_env["FAKE_RT_LOG"] = log_path
        run_env["LD_LIBRARY_PATH"] = os.pathsep.join(
            [str(lib_dir)] + [p for p in os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep) if p]
        )
        proc = subprocess.run(
            [*launcher, str(Path(exe).resolve()), *args], env=run_env, capture_output=True, text=True, timeout=timeout
        )
        with open(log_path, encoding="utf-8") as f:
            events = [json.loads(line) for line in f if line.strip()]
    finally:
        os.unlink(log_path)
    loaded = [e for e in events if e.get("api") == "loaded"]
    assert loaded and loaded[0]["runtime"] == runtime, (
        f"{exe} did not load the fake {runtime} runtime (log: {events[:2]}, stderr: {proc.stderr[-500:]})"
    )
    return Result(proc.returncode, proc.stdout, proc.stderr, events)


CUDA_PATH = "/usr/local/cuda"
LIBDEVICE = f"{CUDA_PATH}/nvvm/libdevice/libdevice.10.bc"


def fatbinary_wrapper_dir() -> str:
    """offload/data/scripts: holds the fatbinary wrapper clang <= 19 needs with CUDA 13
    (docs/targets-and-shipping.md)."""
    from importlib import resources

    return str(resources.files("offload.data").joinpath("scripts"))


def _run_tool(cmd: list[str], env: dict | None = None) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stderr}"


def clang_cuda_link(
    clang: str, major: int, inputs: list[str], output: str | os.PathLike, extra: Sequence[str] = ()
) -> None:
    """The working link of a host object/bundle with embedded CUDA images:
    clang --offload-new-driver IN -L/usr/local/cuda/lib64 -lcudart -Wno-unknown-cuda-version -o OUT,
    with offload/data/scripts first on PATH for clang <= 19."""
    env = dict(os.environ)
    if major <= 19:
        env["PATH"] = fatbinary_wrapper_dir() + os.pathsep + env["PATH"]
    _run_tool(
        [
            clang,
            "--offload-new-driver",
            *map(str, inputs),
            f"-L{CUDA_PATH}/lib64",
            "-lcudart",
            "-Wno-unknown-cuda-version",
            *extra,
            "-o",
            str(output),
        ],
        env=env,
    )


def build_reference_cuda_app(
    tmp: str | os.PathLike, major: int, host_ll: str | os.PathLike, device_ll: list[tuple[str | os.PathLike, str]]
) -> Path:
    """Hand-written modules -> executable, as clang does it: each (device .ll, arch) -> bitcode with
    libdevice linked (only needed, internalized) -> one OffloadBinary -> embedded in the host object
    (-fembed-offload-object) -> clang_cuda_link. Tools of LLVM `major` throughout."""
    tmp = Path(tmp)
    llvm_as = require_tool(f"llvm-as-{major}", major)
    llvm_link = require_tool(f"llvm-link-{major}", major)
    packager = (
        require_tool("llvm-offload-binary-22", 22)
        if major >= 22
        else require_tool(f"clang-offload-packager-{major}", major)
    )
    clang = require_tool(f"clang-{major}", major)
    images = []
    for index, (device, arch) in enumerate(device_ll):
        device_bc, linked_bc = tmp / f"device{index}.bc", tmp / f"device{index}.linked.bc"
        _run_tool([llvm_as, str(device), "-o", str(device_bc)])
        _run_tool([llvm_link, str(device_bc), "--only-needed", "--internalize", LIBDEVICE, "-o", str(linked_bc)])
        images.append(f"--image=file={linked_bc},triple=nvptx64-nvidia-cuda,arch={arch},kind=cuda")
    blob, host_o, app = tmp / "device.offload", tmp / "host.o", tmp / "app"
    _run_tool([packager, "-o", str(blob), *images])
    _run_tool([clang, "-c", str(host_ll), "-Xclang", f"-fembed-offload-object={blob}", "-o", str(host_o)])
    clang_cuda_link(clang, major, [str(host_o)], app)
    return app


def build_reference_hip_app(tmp: str | os.PathLike, hip_lib_dir: str | os.PathLike) -> Path:
    """tests/fake_runtime/hip_*.ll -> gfx90a executable linked by clang 22 against the fake libamdhip64:
    clang-22 --offload-new-driver host.o -L<fake> -lamdhip64 -o app (no --rocm-path needed)."""
    tmp = Path(tmp)
    llvm_as = require_tool("llvm-as-22", 22)
    packager = require_tool("llvm-offload-binary-22", 22)
    clang = require_tool("clang-22", 22)
    device_bc, blob, host_o, app = tmp / "device.bc", tmp / "device.offload", tmp / "host.o", tmp / "app"
    _run_tool([llvm_as, str(FAKE_RUNTIME_SOURCES / "hip_device.ll"), "-o", str(device_bc)])
    _run_tool([packager, "-o", str(blob), f"--image=file={device_bc},triple=amdgcn-amd-amdhsa,arch=gfx90a,kind=hip"])
    _run_tool(
        [
            clang,
            "-c",
            str(FAKE_RUNTIME_SOURCES / "hip_host_clang22.ll"),
            "-Xclang",
            f"-fembed-offload-object={blob}",
            "-o",
            str(host_o),
        ]
    )
    _run_tool([clang, "--offload-new-driver", str(host_o), f"-L{hip_lib_dir}", "-lamdhip64", "-o", str(app)])
    return app


def fatbin_cubins(exe_path: str | os.PathLike) -> dict[str, set[str]]:
    """{arch: kernel symbol names} of the device images linked into the executable."""
    from offload.toolchain.executable import fatbin_cubins as read_cubins

    return read_cubins(str(exe_path))


@dataclass
class FakeRuntime:
    runtime: str  # "cuda" | "hip"
    lib_dir: Path
    launcher: tuple[str, ...] = ()  # how executables of its CPU run here (qemu-aarch64)
    env: dict = field(default_factory=dict)  # what the launcher needs (QEMU_LD_PREFIX)

    def run(
        self, exe: str | os.PathLike, env: dict | None = None, args: list[str] | tuple = (), timeout: int = 60
    ) -> Result:
        return run_executable(
            exe,
            self.runtime,
            env={**self.env, **(env or {})},
            args=args,
            lib_dir=self.lib_dir,
            timeout=timeout,
            launcher=self.launcher,
        )

    @property
    def link_flags(self) -> list[str]:
        """Flags that link against this fake (needed for HIP; CUDA may link the real libcudart)."""
        name = "cudart" if self.runtime == "cuda" else "amdhip64"
        return [f"-L{self.lib_dir}", f"-l{name}"]


def _session_runtime_dir(tmp_path_factory) -> Path:
    # One build per test session, shared by both fixtures (each importable on its own).
    global _built_dir
    if _built_dir is None:
        require_tool("cc")
        _built_dir = build_fake_runtimes(tmp_path_factory.mktemp("fake-runtimes"))
    return _built_dir


@pytest.fixture(scope="session")
def fake_cuda(tmp_path_factory) -> FakeRuntime:
    return FakeRuntime("cuda", _session_runtime_dir(tmp_path_factory))


AARCH64_SYSROOT = "/usr/aarch64-linux-gnu"  # Debian's libc6-dev-arm64-cross


@pytest.fixture(scope="session")
def fake_cuda_aarch64(tmp_path_factory) -> FakeRuntime:
    """The fake CUDA runtime built for aarch64 hosts (Grace Hopper) with Debian's cross gcc; its
    executables run under qemu-aarch64 with the cross sysroot's loader and libc."""
    cc = require_tool("aarch64-linux-gnu-gcc")
    qemu = require_tool("qemu-aarch64")
    if not Path(AARCH64_SYSROOT, "lib", "libc.so.6").exists():
        require_tool("libc6-dev-arm64-cross: /usr/aarch64-linux-gnu/lib/libc.so.6")
    lib_dir = build_fake_runtimes(tmp_path_factory.mktemp("fake-runtime-aarch64"), cc=cc, runtimes=("cuda",))
    return FakeRuntime("cuda", lib_dir, launcher=(qemu,), env={"QEMU_LD_PREFIX": AARCH64_SYSROOT})


@pytest.fixture(scope="session")
def fake_hip(tmp_path_factory) -> FakeRuntime:
    return FakeRuntime("hip", _session_runtime_dir(tmp_path_factory))
