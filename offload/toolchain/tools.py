"""Toolchain discovery for the target side and the build side alike: clangs and their tools, the CUDA
toolkit, ROCm, tool versions. One search order, written here once:

CUDA toolkit (a folder with bin/): an explicit path (--cuda-path, CUDA_PATH= of make) alone; else
  $CUDA_PATH, $CUDA_HOME, $CUDA_ROOT, then STANDARD_CUDA_ROOTS, then the toolkit of the ptxas on PATH.
  libdevice is looked for in the same roots (then Debian's and the nvidia-nvvm wheel's, see
  offload/device/libraries.py); the shipped build.sh is rendered with the same list.
ROCm: an explicit path alone; else $ROCM_PATH, $ROCM_HOME, then STANDARD_ROCM_ROOTS; device libraries in each root's
  amdgcn/bitcode or lib/amdgcn/bitcode, then the distribution's folders (ROCM_DEVICE_LIB_DIRS).
clang for a bundle: --clang PATH; else clang-N (N: the bundle's profile), /usr/lib/llvm-N/bin/clang, clang.
"""

from __future__ import annotations

import glob
import json
import os
import platform
import shutil
import subprocess
import sysconfig
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from offload.cache.facts import remembered
from offload.errors import OffloadError
from offload.formats.vendors import CUDA, HIP, Vendor
from offload.options.link import link_option

CUDA_ENVIRONMENT = ("CUDA_PATH", "CUDA_HOME", "CUDA_ROOT")
STANDARD_CUDA_ROOTS = ("/usr/local/cuda", "/opt/cuda", "/usr/lib/cuda", "/usr/lib/nvidia-cuda-toolkit")
ROCM_ENVIRONMENT = ("ROCM_PATH", "ROCM_HOME")
STANDARD_ROCM_ROOTS = ("/opt/rocm",)
# This machine's multiarch folder name (the build side reads Debian's ROCm device bitcode from it).
_MULTIARCH = sysconfig.get_config_var("MULTIARCH") or f"{platform.machine()}-linux-gnu"
ROCM_DEVICE_LIB_DIRS = (f"/usr/lib/{_MULTIARCH}/amdgcn/bitcode", "/usr/lib/amdgcn/bitcode", "/usr/share/amdgcn/bitcode")


@dataclass(frozen=True)
class Clang:
    path: str
    version: str  # "22.1.8"
    major: int
    linker_wrapper: str | None
    packager: str | None
    lld: str | None


@dataclass(frozen=True)
class CudaToolkit:
    root: str
    version: str  # "13.0.88", "" when unknown
    ptxas: str | None
    fatbinary: str | None
    nvlink: str | None
    libcudart: str | None

    @property
    def major(self) -> int | None:
        head = self.version.split(".")[0]
        return int(head) if head.isdigit() else None


@dataclass(frozen=True)
class Rocm:
    root: str | None
    device_libs: str | None
    libamdhip64: str | None


def tool_output(argv: list[str]) -> str:
    """What a tool asked about itself (`--version`, `-dumpmachine`) prints, its output then its errors; ""
    when it cannot be run. Asked once per tool binary and remembered (offload.cache.facts)."""
    return remembered("output", argv[:1], lambda: _output(argv), _is_text, arguments=argv[1:]) or ""


def _output(argv: list[str]) -> str | None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, errors="replace", timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout + done.stderr


def _is_text(answer: object) -> bool:
    return isinstance(answer, str)


def tool_version(path: str, product: str) -> str | None:
    """'22.1.8' from `TOOL --version` ("... <product> version 22.1.8 ..."), None if it does not say so."""
    words = tool_output([path, "--version"]).split()
    for i, word in enumerate(words[:-1]):
        if word == "version" and i > 0 and words[i - 1] == product:
            return words[i + 1]
    return None


def clang_target_host(path: str, flags: Sequence[str] = ()):
    """The host triple (offload.formats.hosts record) `clang FLAGS` links for: a --target=/-target among
    the flags, else the clang's default target (`-dumpmachine`)."""
    from offload.formats.hosts import host_triple

    target = None
    for index, flag in enumerate(flags):
        if flag.startswith("--target="):
            target = flag.split("=", 1)[1]
        elif flag in ("-target", "--target") and index + 1 < len(flags):
            target = flags[index + 1]
    if target is None:
        target = tool_output([path, "-dumpmachine"]).strip()
    try:
        return host_triple(target)
    except OffloadError as e:
        raise OffloadError(f"{path} links for {target or 'an unknown target'}: {e.message}") from None


def clang_version(path: str) -> str | None:
    """'22.1.8' from `clang --version` ("... clang version 22.1.8 (...)"), None if it is no clang."""
    return tool_version(path, "clang")


def describe_clang(path: str) -> Clang | None:
    resolved = shutil.which(path)
    if resolved is None:
        return None
    version = clang_version(resolved)
    if version is None or not version.split(".")[0].isdigit():
        return None
    bindir = Path(os.path.realpath(resolved)).parent

    def beside(*names: str) -> str | None:
        for name in names:
            if (bindir / name).is_file():
                return str(bindir / name)
        return None

    return Clang(
        resolved,
        version,
        int(version.split(".")[0]),
        beside("clang-linker-wrapper"),
        beside("llvm-offload-binary", "clang-offload-packager"),
        beside("ld.lld", "lld"),
    )


def find_clangs(extra: Sequence[str] = ()) -> list[Clang]:
    """Every clang on PATH (clang, clang-NN) and in /usr/lib/llvm-*/bin, one per real binary."""
    candidates = list(extra) + ["clang"]
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        candidates += sorted(glob.glob(os.path.join(folder or ".", "clang-[0-9]*")))
    candidates += sorted(glob.glob("/usr/lib/llvm-*/bin/clang"))
    found: dict[str, Clang] = {}
    for candidate in candidates:
        base = os.path.basename(candidate)
        if base.startswith("clang-") and not base[len("clang-") :].isdigit():
            continue
        resolved = shutil.which(candidate)
        if resolved is None or os.path.realpath(resolved) in found:
            continue
        clang = describe_clang(resolved)
        if clang is not None:
            found[os.path.realpath(resolved)] = clang
    return sorted(found.values(), key=lambda c: (-c.major, c.path))


def runtime_library_dirs(vendor, host=None) -> list[str]:
    """Toolkit sub-folders that may hold the vendor's runtime library for `host` (an offload.formats.hosts
    record, default this machine's), in search order: for this machine's own CPU the plain lib64/lib, then
    the host's multiarch folder (CUDA targets/<cuda_target>/lib, ROCm lib/<multiarch>); for another CPU
    only the latter (lib64/lib hold this machine's libraries, never another CPU's)."""
    from offload.formats.hosts import host_of_machine

    own_host = host_of_machine(platform.machine())
    host = host or own_host
    return (list(vendor.library_dirs) if host is own_host else []) + host_library_folders(vendor, host)


def host_library_folders(vendor, host) -> list[str]:
    """The vendor's runtime-library folders named for `host` (CUDA targets/<cuda_target>/lib, ROCm lib/<multiarch>)."""
    return [t.format(cuda_target=host.cuda_target, multiarch=host.name) for t in vendor.host_library_dirs]


def _file_or_none(path: Path) -> str | None:
    return str(path) if path.is_file() else None


def find_cuda(cuda_path: str | None = None, host=None) -> CudaToolkit | None:
    """The first of cuda_roots(cuda_path) with a bin/ folder; its libcudart for `host` (default: this
    machine's CPU; see runtime_library_dirs)."""
    for root in cuda_roots(cuda_path):
        if not root or not Path(root, "bin").is_dir():
            continue
        ptxas, fatbinary, nvlink = (_file_or_none(Path(root, "bin", name)) for name in ("ptxas", "fatbinary", "nvlink"))
        libs = next(
            (
                found
                for sub in runtime_library_dirs(CUDA, host)
                if (found := sorted(glob.glob(os.path.join(root, sub, "libcudart.so*"))))
            ),
            [],
        )
        return CudaToolkit(str(root), _cuda_version(root, ptxas), ptxas, fatbinary, nvlink, libs[0] if libs else None)
    return None


# The one clang-discovery rule, for a bundle made for clang N: link, `config --clang` (the Makefile
# fragment's default OFFLOAD_CLANG) and the shipped build.sh all try these, in this order.
CLANG_CANDIDATES = ("clang-{major}", "/usr/lib/llvm-{major}/bin/clang", "clang")


def clang_candidates(major: int) -> list[str]:
    return [candidate.format(major=major) for candidate in CLANG_CANDIDATES]


def find_target_clang(explicit: str | None, profile_major: int):
    """--clang PATH, else the first of clang_candidates(N) for the bundle's profile N that is a clang."""
    if explicit:
        clang = describe_clang(explicit)
        if clang is None:
            raise OffloadError((link_option("clang", explicit), ": not found or not a clang"))
        return clang
    for candidate in clang_candidates(profile_major):
        clang = describe_clang(candidate)
        if clang is not None:
            return clang
    raise OffloadError(
        (
            f"no clang found: install clang-{profile_major} and clang-tools-{profile_major}, or pass ",
            link_option("clang", "PATH"),
        )
    )


def cuda_roots(explicit: str | None = None) -> list[str]:
    """Candidate CUDA toolkit folders, in the one search order (see the module's docstring)."""
    if explicit:
        return [explicit]
    roots = [os.environ[name] for name in CUDA_ENVIRONMENT if os.environ.get(name)]
    roots += list(STANDARD_CUDA_ROOTS)
    ptxas_on_path = shutil.which("ptxas")
    if ptxas_on_path:
        roots.append(str(Path(os.path.realpath(ptxas_on_path)).parent.parent))
    return roots


def shell_search_words(environment: tuple[str, ...], roots: tuple[str, ...]) -> str:
    """The search order as sh words for the shipped build.sh: "${VAR:-}" for each variable, then the roots."""
    import shlex

    return " ".join([f'"${{{name}:-}}"' for name in environment] + [shlex.quote(root) for root in roots])


def rocm_roots(explicit: str | None = None) -> list[str]:
    if explicit:
        return [explicit]
    return [os.environ[name] for name in ROCM_ENVIRONMENT if os.environ.get(name)] + list(STANDARD_ROCM_ROOTS)


def rocm_device_lib_dirs(roots: list[str]) -> list[str]:
    """Where ocml.bc and friends may be, for these ROCm roots, in search order."""
    return [str(Path(r) / sub) for r in roots for sub in ("amdgcn/bitcode", "lib/amdgcn/bitcode")] + list(
        ROCM_DEVICE_LIB_DIRS
    )


def _cuda_version(root: str, ptxas: str | None) -> str:
    try:
        return json.loads(Path(root, "version.json").read_text())["cuda"]["version"]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    if ptxas:  # "Cuda compilation tools, release 13.0, V13.0.88"
        for word in tool_output([ptxas, "--version"]).split():
            if word.startswith("V") and word[1:2].isdigit():
                return word[1:]
    return ""


def find_rocm(rocm_path: str | None = None, host=None) -> Rocm:
    roots = rocm_roots(rocm_path)
    root = next((r for r in roots if r and Path(r).is_dir()), None)
    device_libs = next(
        (d for d in rocm_device_lib_dirs([root] if root else []) if glob.glob(os.path.join(d, "ocml*.bc"))), None
    )
    # Distribution packages put libamdhip64 in /usr/lib/<multiarch>: /usr is a ROCm root too.
    hip_candidates = next(
        (
            found
            for base in ([root] if root else []) + ["/usr"]
            for sub in runtime_library_dirs(HIP, host)
            if (found := glob.glob(os.path.join(base, sub, "libamdhip64.so*")))
        ),
        [],
    )
    return Rocm(root, device_libs, sorted(hip_candidates)[0] if hip_candidates else None)


# Each vendor's toolkit finder: (explicit folder or None) -> the toolkit found, or None.
TOOLKIT_FINDERS: dict[Vendor, Callable[[str | None], CudaToolkit | Rocm | None]] = {CUDA: find_cuda, HIP: find_rocm}


def toolkit_root(vendor: Vendor, path: str | None = None) -> str | None:
    """The folder of a vendor's toolkit (`path` if given and usable, else found), or None."""
    found = TOOLKIT_FINDERS[vendor](path)
    return found.root if found else None
