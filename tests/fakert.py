"""Test harness: build the fake CUDA / HIP runtimes (tests/fake_runtime/fake_runtime.c) with the system C
compiler and run executables against them, returning the runtime's JSON log as events.

Use from a test file:
    from fakert import fake_cuda, fake_hip          # session-scoped pytest fixtures
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
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from conftest import require_tool

FAKE_RUNTIME_SOURCES = Path(__file__).resolve().parent / "fake_runtime"
SOURCE = FAKE_RUNTIME_SOURCES / "fake_runtime.c"
CUDART_VERSION_SCRIPT = FAKE_RUNTIME_SOURCES / "cudart.map"

# Library file names as the real runtimes ship them (SONAME first, then the -l link name).
CUDA_LIBRARIES = ("libcudart.so.13", "libcudart.so")
HIP_LIBRARIES = ("libamdhip64.so.6", "libamdhip64.so")


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
        return [e for e in self.events if e.get("api") in ("__cudaRegisterVar", "__hipRegisterVar",
                                                            "__cudaRegisterManagedVar", "__hipRegisterManagedVar")]

    def launches(self) -> list[dict]:
        return [e for e in self.events if e.get("api") in ("cudaLaunchKernel", "hipLaunchKernel")]

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


def build_fake_runtimes(out_dir: str | os.PathLike, cc: str | None = None) -> Path:
    """Build both fake runtimes into out_dir (libcudart.so.13 + libcudart.so, libamdhip64.so.6 +
    libamdhip64.so); returns out_dir."""
    cc = cc or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        raise RuntimeError("no system C compiler (cc) to build the fake runtimes")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    common = [cc, "-shared", "-fPIC", "-O1", "-Wall", "-Werror", "-fvisibility=hidden", str(SOURCE)]
    builds = [
        (CUDA_LIBRARIES, [f"-Wl,--version-script={CUDART_VERSION_SCRIPT}"]),
        (HIP_LIBRARIES, ["-DFAKE_HIP"]),
    ]
    for (soname, link_name), extra in builds:
        subprocess.run([*common, *extra, f"-Wl,-soname,{soname}", "-o", str(out / soname)],
                       check=True, capture_output=True, text=True)
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


def run_executable(exe: str | os.PathLike, runtime: str = "cuda", env: dict | None = None,
                   args: list[str] | tuple = (), lib_dir: str | os.PathLike | None = None,
                   timeout: int = 60) -> Result:
    """Run exe with the fake runtime first on LD_LIBRARY_PATH; return its exit status, output and log.
    Raises AssertionError when the fake runtime was not the one loaded."""
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
            [str(lib_dir)] + [p for p in os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep) if p])
        proc = subprocess.run([str(Path(exe).resolve()), *args], env=run_env, capture_output=True,
                              text=True, timeout=timeout)
        with open(log_path, encoding="utf-8") as f:
            events = [json.loads(line) for line in f if line.strip()]
    finally:
        os.unlink(log_path)
    loaded = [e for e in events if e.get("api") == "loaded"]
    assert loaded and loaded[0]["runtime"] == runtime, (
        f"{exe} did not load the fake {runtime} runtime (log: {events[:2]}, stderr: {proc.stderr[-500:]})")
    return Result(proc.returncode, proc.stdout, proc.stderr, events)


def fatbin_cubins(exe_path: str | os.PathLike) -> dict[str, set[str]]:
    """{arch: kernel symbol names} of the device images linked into the executable."""
    from offload.executable import fatbin_cubins as read_cubins

    return read_cubins(str(exe_path))


@dataclass
class FakeRuntime:
    runtime: str  # "cuda" | "hip"
    lib_dir: Path

    def run(self, exe: str | os.PathLike, env: dict | None = None, args: list[str] | tuple = (),
            timeout: int = 60) -> Result:
        return run_executable(exe, self.runtime, env=env, args=args, lib_dir=self.lib_dir, timeout=timeout)

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


@pytest.fixture(scope="session")
def fake_hip(tmp_path_factory) -> FakeRuntime:
    return FakeRuntime("hip", _session_runtime_dir(tmp_path_factory))
