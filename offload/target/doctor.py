"""What this machine has for linking bundles (clangs, linker wrapper, packager, CUDA, ROCm), and for
one bundle whether it can be linked here, each problem with its fix."""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from offload.errors import OffloadError
from offload.formats.profiles import (NO_PROFILE, OTHER_ENTRIES, UNREADABLE_BITCODE, available_profiles, link_refusals,
                                      load_profile)

ROCM_DEVICE_LIB_DIRS = ("/usr/lib/x86_64-linux-gnu/amdgcn/bitcode", "/usr/lib/amdgcn/bitcode")


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


@dataclass(frozen=True)
class Finding:
    problem: str
    fix: str
    blocking: bool = True


@dataclass
class BundleNeeds:
    """What linking a bundle takes (from its manifest)."""
    name: str
    entry_profile: int
    producer_llvm: int
    offload_kinds: list[str]
    archs: list[str]
    device_image: str  # bitcode | cubin | ptx
    host_format: str  # bc | obj
    extra: dict = field(default_factory=dict)

    @property
    def has_bitcode(self) -> bool:
        return self.device_image == "bitcode" or self.host_format == "bc"


def _run_version(argv: list[str]) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout + done.stderr


def tool_version(path: str, product: str) -> str | None:
    """'22.1.8' from `TOOL --version` ("... <product> version 22.1.8 ..."), None if it does not say so."""
    words = _run_version([path, "--version"]).split()
    for i, word in enumerate(words[:-1]):
        if word == "version" and i > 0 and words[i - 1] == product:
            return words[i + 1]
    return None


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

    return Clang(resolved, version, int(version.split(".")[0]),
                 beside("clang-linker-wrapper"),
                 beside("llvm-offload-binary", "clang-offload-packager"),
                 beside("ld.lld", "lld"))


def find_clangs(extra: list[str] = ()) -> list[Clang]:
    """Every clang on PATH (clang, clang-NN) and in /usr/lib/llvm-*/bin, one per real binary."""
    candidates = list(extra) + ["clang"]
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        candidates += sorted(glob.glob(os.path.join(folder or ".", "clang-[0-9]*")))
    candidates += sorted(glob.glob("/usr/lib/llvm-*/bin/clang"))
    found: dict[str, Clang] = {}
    for candidate in candidates:
        base = os.path.basename(candidate)
        if base.startswith("clang-") and not base[len("clang-"):].isdigit():
            continue
        resolved = shutil.which(candidate)
        if resolved is None or os.path.realpath(resolved) in found:
            continue
        clang = describe_clang(resolved)
        if clang is not None:
            found[os.path.realpath(resolved)] = clang
    return sorted(found.values(), key=lambda c: (-c.major, c.path))


def find_cuda(cuda_path: str | None = None) -> CudaToolkit | None:
    roots = [cuda_path] if cuda_path else [os.environ.get("CUDA_PATH"), os.environ.get("CUDA_HOME"),
                                           "/usr/local/cuda"]
    ptxas_on_path = shutil.which("ptxas")
    if not cuda_path and ptxas_on_path:
        roots.append(str(Path(os.path.realpath(ptxas_on_path)).parent.parent))
    for root in roots:
        if not root or not Path(root, "bin").is_dir():
            continue
        bindir = Path(root, "bin")
        tool = lambda n: str(bindir / n) if (bindir / n).is_file() else None  # noqa: E731
        libs = sorted(glob.glob(os.path.join(root, "lib64", "libcudart.so*")) +
                      glob.glob(os.path.join(root, "lib", "libcudart.so*")))
        return CudaToolkit(str(root), _cuda_version(root, tool("ptxas")), tool("ptxas"),
                           tool("fatbinary"), tool("nvlink"), libs[0] if libs else None)
    return None


def fatbinary_wrapper_needed(profile, cuda: CudaToolkit) -> bool:
    """Whether this clang's linker wrapper (its profile) calls `fatbinary --image=`, which the CUDA 13+
    fatbinary rejects, so that the link needs offload/data/scripts/fatbinary first on PATH."""
    return bool(profile.cuda.get("fatbinary_needs_image3_wrapper")) and (cuda.major or 0) >= 13


def _cuda_version(root: str, ptxas: str | None) -> str:
    try:
        return json.loads(Path(root, "version.json").read_text())["cuda"]["version"]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    if ptxas:  # "Cuda compilation tools, release 13.0, V13.0.88"
        for word in _run_version([ptxas, "--version"]).split():
            if word.startswith("V") and word[1:2].isdigit():
                return word[1:]
    return ""


def find_rocm(rocm_path: str | None = None) -> Rocm:
    roots = [rocm_path] if rocm_path else [os.environ.get("ROCM_PATH"), "/opt/rocm"]
    root = next((r for r in roots if r and Path(r).is_dir()), None)
    lib_dirs = ([os.path.join(root, "amdgcn", "bitcode")] if root else []) + list(ROCM_DEVICE_LIB_DIRS)
    device_libs = next((d for d in lib_dirs if glob.glob(os.path.join(d, "ocml*.bc"))), None)
    hip_candidates = glob.glob(os.path.join(root, "lib", "libamdhip64.so*")) if root else []
    hip_candidates += glob.glob("/usr/lib/x86_64-linux-gnu/libamdhip64.so*")
    return Rocm(root, device_libs, sorted(hip_candidates)[0] if hip_candidates else None)


# ---- can this machine link a bundle? -------------------------------------------------------------

def bundle_findings(needs: BundleNeeds, clang: Clang | None, cuda: CudaToolkit | None,
                    rocm: Rocm, wrapper_shipped: bool = False) -> list[Finding]:
    """Each reason `clang` (with this machine's toolkits) cannot link the bundle, with its fix."""
    findings: list[Finding] = []
    if clang is None:
        findings.append(Finding(
            "no clang found",
            f"install clang-{needs.entry_profile} and clang-tools-{needs.entry_profile}, or pass CLANG=/path/to/clang"))
        return findings
    refusals = link_refusals(needs.entry_profile, needs.producer_llvm if needs.has_bitcode else None, clang.major)
    if NO_PROFILE in refusals or OTHER_ENTRIES in refusals:
        alternatives = [m for m in available_profiles() if m == clang.major]
        remake = (f"re-ship with --target-clang {clang.major}" if alternatives
                  else f"no profile exists for clang {clang.major} (profiles: "
                       f"{', '.join(map(str, available_profiles()))})")
        findings.append(Finding(
            f"{clang.path} is clang {clang.version} but the bundle's offload entries follow clang "
            f"{needs.entry_profile}'s layout: the executable would register no kernels",
            f"use clang {needs.entry_profile} (CLANG=clang-{needs.entry_profile}) or {remake}"))
    elif UNREADABLE_BITCODE in refusals:
        findings.append(Finding(
            f"the bundle holds LLVM {needs.producer_llvm} bitcode, which clang {clang.major} cannot read",
            "re-ship with --portable (cubin device images, ELF host object)"))
    if clang.linker_wrapper is None:
        findings.append(Finding(f"no clang-linker-wrapper beside {clang.path}",
                                f"install clang-tools-{clang.major}"))
    if "cuda" in needs.offload_kinds:
        if cuda is None:
            findings.append(Finding("no CUDA toolkit found (ptxas, nvlink, fatbinary, libcudart)",
                                    "install the CUDA toolkit or pass CUDA_PATH=/path/to/cuda"))
        else:
            for name in ("ptxas", "nvlink", "fatbinary", "libcudart"):
                if getattr(cuda, name) is None:
                    findings.append(Finding(f"CUDA at {cuda.root} has no {name}",
                                            "install the full CUDA toolkit or pass CUDA_PATH="))
            if not refusals and fatbinary_wrapper_needed(load_profile(clang.major), cuda):
                findings.append(Finding(
                    f"clang {clang.major}'s linker wrapper calls fatbinary with --image=, which CUDA "
                    f"{cuda.version}'s fatbinary rejects",
                    "the shipped Makefile puts its fatbinary wrapper first on PATH" if wrapper_shipped
                    else "put mlir-offload's offload/data/scripts/fatbinary wrapper first on PATH",
                    blocking=not wrapper_shipped))
    if "hip" in needs.offload_kinds:
        if clang.lld is None:
            findings.append(Finding(f"no ld.lld beside {clang.path} (AMDGPU images are linked with lld)",
                                    f"install lld-{clang.major}"))
        if rocm.libamdhip64 is None:
            findings.append(Finding("no libamdhip64 (HIP runtime) found",
                                    "install ROCm's HIP runtime or pass ROCM_PATH=/path/to/rocm"))
    return findings


def report_machine(clangs: list[Clang], cuda: CudaToolkit | None, rocm: Rocm) -> list[str]:
    lines = []
    if not clangs:
        lines.append("clang: not found (install clang-22 and clang-tools-22)")
    for c in clangs:
        wrapper = "clang-linker-wrapper" if c.linker_wrapper else "NO clang-linker-wrapper"
        packager = os.path.basename(c.packager) if c.packager else "no offload packager"
        profile = "profile" if c.major in available_profiles() else "NO profile"
        lines.append(f"clang {c.version}: {c.path} ({wrapper}, {packager}, {profile} for clang {c.major})")
    if cuda is None:
        lines.append("CUDA: not found (set CUDA_PATH)")
    else:
        parts = [f"{n} {'ok' if getattr(cuda, n) else 'MISSING'}"
                 for n in ("ptxas", "fatbinary", "nvlink", "libcudart")]
        lines.append(f"CUDA {cuda.version or '(version unknown)'}: {cuda.root} ({', '.join(parts)})")
    lines.append(f"ROCm: {rocm.root or 'no install'} (device libs: {rocm.device_libs or 'not found'}; "
                 f"libamdhip64: {rocm.libamdhip64 or 'not found'})")
    return lines
