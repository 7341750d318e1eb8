"""Shared test helpers: running the CLI as a user does, and finding the real target toolchains."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

# The fake runtimes' session fixtures (fake_cuda, fake_hip, fake_cuda_aarch64) for every test file.
pytest_plugins = ["fakert"]

# Tests compute paths from these, never from their own file's place (they sit in folders of tests/).
REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "data"
# Hand-written reference modules (tests/data/reference/README.md).
SHARED_REFERENCE = DATA / "reference"


def find_tool(name: str, llvm_major: int | None = None) -> str | None:
    """A tool by its Debian name (clang-22), else from /usr/lib/llvm-N/bin, else the CUDA toolkit."""
    candidates = [name]
    if llvm_major is not None:
        candidates.append(f"/usr/lib/llvm-{llvm_major}/bin/{name.rsplit('-', 1)[0]}")
    candidates.append(f"/usr/local/cuda/bin/{name}")
    for c in candidates:
        found = shutil.which(c)
        if found:
            return found
    return None


def require_tool(name: str, llvm_major: int | None = None) -> str:
    """In CI a missing toolchain is a failure (scripts/setup installs it); elsewhere the test is skipped."""
    path = find_tool(name, llvm_major)
    if path is None:
        message = f"{name} not found (scripts/setup installs it)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return path


def cuda_rdc_object(clang: str, source: Path, output: Path) -> None:
    """A CUDA C++ file compiled as clang's offload driver does for a relocatable device link (-fgpu-rdc,
    the new driver; sm_80), without the CUDA headers and libraries: the device code beside our bundles."""
    command = [clang, "-x", "cuda", "-nocudainc", "-nocudalib", "--offload-arch=sm_80", "-fgpu-rdc"]
    command += ["--offload-new-driver", "-Wno-unknown-cuda-version", "-c", str(source), "-o", str(output)]
    subprocess.run(command, check=True, capture_output=True)


def run_cli(
    *args: str, cwd: str | os.PathLike | None = None, env: dict | None = None, input: bytes | None = None
) -> subprocess.CompletedProcess:
    """Run `mlir-offload ARGS` in a fresh process, exactly as a user would, with this checkout's code (the
    repository root first on PYTHONPATH, before what `env` adds: never an installed copy)."""
    given = env is not None
    env = dict(os.environ if env is None else env)
    # A caller's own entries (a fake package) follow the checkout; an inherited PYTHONPATH does not count.
    added = [path for path in env.get("PYTHONPATH", "").split(os.pathsep) if given and path and path != str(REPO)]
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), *added])
    return subprocess.run(
        [sys.executable, "-m", "offload", *args],
        cwd=cwd,
        env=env,
        input=input,
        capture_output=True,
        text=input is None,
        timeout=600,
    )


def dry_run_words(line: str) -> tuple[list[str], list[str]]:
    """(environment assignments, command words) of a shell line `link --dry-run` prints: NAME=VALUE words the
    command runs with (the toolkit on PATH, the ptxas wrapper's variables), then clang and its arguments."""
    words = shlex.split(line)
    first = next(
        (i for i, word in enumerate(words) if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", word)), len(words)
    )
    return words[:first], words[first:]


def stderr_on_terminal(args, env: dict, cwd: str | os.PathLike | None = None) -> tuple[int, bytes]:
    """(exit status, standard error) of `mlir-offload ARGS` run with its standard error on a pseudo-terminal."""
    leader, follower = os.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "offload", *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=follower,
            env=env,
            cwd=cwd,
            timeout=300,
        )
        os.close(follower)
        follower = -1
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal's other side is closed: all read
                break
            if not chunk:
                break
            chunks.append(chunk)
        return done.returncode, b"".join(chunks)
    finally:
        os.close(leader)
        if follower >= 0:
            os.close(follower)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    """`-m fast`, the former name of `-m no_toolchain`, selects the same tests."""
    for item in items:
        if item.get_closest_marker("no_toolchain") or item.get_closest_marker("fast"):
            item.add_marker("no_toolchain")
            item.add_marker("fast")


# Hypothesis replays no examples of earlier sessions: each session starts from the same state.
settings.register_profile("hermetic", database=None)
settings.load_profile("hermetic")


# Whatever a fixture's scope, and from collection on, nothing the tests run writes outside temporary
# folders: the session gets an empty HOME, XDG cache, device image cache, TMPDIR and Hypothesis storage of
# its own, set here because module- and session-scoped fixtures compile before any per-test fixture runs.
# `bash scripts/run_tests` checks that the user's HOME stays as it was.
SESSION_ROOT = Path(tempfile.mkdtemp(prefix="mlir-offload-tests-"))
SESSION_FOLDERS = {
    "HOME": "home",
    "XDG_CACHE_HOME": "xdg-cache",
    "MLIR_OFFLOAD_CACHE_DIR": "image-cache",
    "TMPDIR": "tmp",
    "HYPOTHESIS_STORAGE_DIRECTORY": "hypothesis",
    # the emulator's pass plugin and runtime: built once a session (a build takes half a minute)
    "MLIR_OFFLOAD_EMULATOR_CACHE": "emulator-build",
}
for _name, _folder in SESSION_FOLDERS.items():
    (SESSION_ROOT / _folder).mkdir()
    os.environ[_name] = str(SESSION_ROOT / _folder)
# Every `python -m offload` a test starts runs this checkout, never an installed copy of another one.
os.environ["PYTHONPATH"] = os.pathsep.join(
    [str(REPO), *[p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p != str(REPO)]]
)
for _name in [name for name in os.environ if name.startswith("MLIR_OFFLOAD_REMOTE_CACHE")]:
    del os.environ[_name]  # the user's shared cache server is outside too


def pytest_unconfigure(config):
    shutil.rmtree(SESSION_ROOT, ignore_errors=True)


@pytest.fixture(scope="session", autouse=True)
def private_tempdir(tmp_path_factory):
    """This process's own mkdtemp()s go into the session's TMPDIR too (pytest's temporary folders, made
    before, stay where pytest keeps them)."""
    tmp_path_factory.getbasetemp()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tempfile, "tempdir", os.environ["TMPDIR"])
        yield


@pytest.fixture(autouse=True)
def private_image_cache(tmp_path_factory, monkeypatch):
    """Each test its own device image cache: none writes the user's, none sees another test's images."""
    monkeypatch.setenv("MLIR_OFFLOAD_CACHE_DIR", str(tmp_path_factory.mktemp("image-cache")))


@pytest.fixture
def clang22() -> str:
    return require_tool("clang-22", 22)


@pytest.fixture
def clang19() -> str:
    return require_tool("clang-19", 19)


@pytest.fixture
def llvm_offload_binary22() -> str:
    return require_tool("llvm-offload-binary-22", 22)


@pytest.fixture
def clang_offload_packager19() -> str:
    return require_tool("clang-offload-packager-19", 19)


@pytest.fixture
def ptxas() -> str:
    return require_tool("ptxas")
