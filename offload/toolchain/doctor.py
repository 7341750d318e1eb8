"""What this machine has for linking bundles (clangs, linker wrapper, packager, CUDA, ROCm: found by
offload/toolchain/tools.py), and for one bundle whether it can be linked here, each problem with its fix."""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass

from offload.errors import FLAG, OffloadError, worded
from offload.formats.hosts import host_refusal
from offload.formats.profiles import (
    NO_PROFILE,
    OTHER_ENTRIES,
    UNREADABLE_BITCODE,
    available_profiles,
    link_refusals,
    load_profile,
)
from offload.packager.bundle import BundleRecord
from offload.toolchain.tools import Clang, CudaToolkit, Rocm, clang_target_host


@dataclass(frozen=True)
class Finding:
    problem: str
    fix: str
    blocking: bool = True


@dataclass
class BundleNeeds:
    """What linking a bundle takes: its record (read back from its shipped manifest) and what the
    manifest measured of its images."""

    name: str
    record: BundleRecord
    producer_llvm: int  # newest LLVM major among the bitcode parts (0: none)
    device_image: str  # bitcode | cubin | ptx
    shipped: bool = True  # a shipped archive (its Makefile links it), else a bundle `mlir-offload link` links

    @property
    def remake(self) -> str:  # how its maker makes it again
        return "re-ship" if self.shipped else "recompile"

    def clang_setting(self, clang: str) -> str:
        """How the user names the clang that links it: the Makefile's variable, or link's flag."""
        return f"CLANG={clang}" if self.shipped else f"--clang {clang}"

    @property
    def entry_profile(self) -> int:
        return self.record.profile

    @property
    def host_format(self) -> str:  # bc | obj
        return self.record.host_format

    @property
    def host_triple(self) -> str:  # the CPU its host code is for (offload.formats.hosts name)
        return self.record.host_triple

    @property
    def offload_kinds(self) -> list[str]:
        return sorted({target.split(":", 1)[0] for target in self.record.targets})

    @property
    def archs(self) -> list[str]:
        return [target.split(":", 1)[1] for target in self.record.targets]

    @property
    def has_bitcode(self) -> bool:
        return self.device_image == "bitcode" or self.host_format == "bc"


def library_findings(needs: BundleNeeds, cuda: CudaToolkit) -> list[Finding]:
    """Each library the bundle's record names (cusparse: its sparse ops) that is not beside the toolkit's
    libcudart, where link looks for it."""
    folder = os.path.dirname(cuda.libcudart) if cuda.libcudart else os.path.join(cuda.root, "lib64")
    findings = []
    for library in needs.record.libraries:
        try:
            present = any(name.startswith(f"lib{library}.so") for name in os.listdir(folder))
        except OSError:
            present = False
        if not present:
            findings.append(
                Finding(
                    f"the bundle calls lib{library}, which is not in {folder}",
                    f"install the toolkit's lib{library} (pip: nvidia-{library}), or give its folder to the "
                    f"link: LDFLAGS=-L/path/to/lib{library}",
                )
            )
    return findings


# Where MLIR's libraries are besides the clang's own LLVM's lib folder (Debian's libmlir-N puts them there).
SYSTEM_LIBRARY_FOLDERS = ("/usr/local/lib", "/usr/lib", "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu")


def library_folders(clang: Clang) -> list[str]:
    """Where a link with `clang` may find a user's library: the clang's LLVM lib folder (its libmlir-N
    copy), LIBRARY_PATH and LD_LIBRARY_PATH, then the system's folders."""
    llvm = os.path.dirname(os.path.dirname(os.path.realpath(clang.path)))
    variables = [os.environ.get(name, "") for name in ("LIBRARY_PATH", "LD_LIBRARY_PATH")]
    given = [folder for value in variables for folder in value.split(os.pathsep) if folder]
    # Other LLVMs' copies serve too (the runtime's functions are C): newest first.
    others = sorted(glob.glob("/usr/lib/llvm-*/lib"), key=_llvm_folder_major, reverse=True)
    return list(dict.fromkeys([os.path.join(llvm, "lib"), *given, *others, *SYSTEM_LIBRARY_FOLDERS]))


def _llvm_folder_major(folder: str) -> int:
    digits = folder.split("/llvm-")[-1].split("/")[0]
    return int(digits) if digits.isascii() and digits.isdigit() else 0


def find_library_file(library: str, folders) -> str | None:
    """The first lib`library`.so[.N...] in `folders` (sorted: the plain name before versioned ones)."""
    for folder in folders:
        try:
            names = sorted(name for name in os.listdir(folder) if name.startswith(f"lib{library}.so"))
        except OSError:
            continue
        if names:
            return os.path.join(folder, names[0])
    return None


def sparse_tensor_runtime_findings(needs: BundleNeeds, folders) -> list[Finding]:
    """The user's libmlir_c_runner_utils a bundle calling MLIR's sparse tensor runtime needs at link: where
    it is here (a note saying how to give it to the link), or a problem when it is nowhere in `folders`."""
    from offload.formats.sparse_tensor_runtime import LIBRARY

    function = needs.record.sparse_tensor_runtime
    if not function:
        return []
    found = find_library_file(LIBRARY, folders)
    what = f"the bundle calls MLIR's sparse tensor runtime ({function}), which the link must be given: lib{LIBRARY}"
    if found is None:
        return [
            Finding(
                f"{what}, not found in {', '.join(folders)}",
                f"install MLIR's libraries (libmlir-{needs.entry_profile}), then give the file to the link"
                + (" (make LDLIBS='/path/to/" if needs.shipped else " (mlir-offload link BUNDLE /path/to/")
                + f"lib{LIBRARY}.so -Wl,-rpath,/path/to"
                + ("')" if needs.shipped else ")"),
            )
        ]
    folder = os.path.dirname(found)
    words = f"{found} -Wl,-rpath,{folder}"
    how = f"make LDLIBS='{words}'" if needs.shipped else f"mlir-offload link {needs.name} {words}"
    return [Finding(f"{what}, found at {found}", f"give it to the link: {how}", blocking=False)]


def fatbinary_wrapper_needed(profile, cuda: CudaToolkit) -> bool:
    """Whether this clang's linker wrapper (its profile) calls `fatbinary --image=`, which the CUDA 13+
    fatbinary rejects, so that the link needs offload/data/scripts/fatbinary first on PATH."""
    return bool(profile.cuda.get("fatbinary_needs_image3_wrapper")) and (cuda.major or 0) >= 13


# ---- can this machine link a bundle? -------------------------------------------------------------


def bundle_findings(
    needs: BundleNeeds, clang: Clang | None, cuda: CudaToolkit | None, rocm: Rocm, wrapper_shipped: bool = False
) -> list[Finding]:
    """Each reason `clang` (with this machine's toolkits) cannot link the bundle, with its fix."""
    findings: list[Finding] = []
    if clang is None:
        findings.append(
            Finding(
                "no clang found",
                f"install clang-{needs.entry_profile} and clang-tools-{needs.entry_profile}, "
                f"or pass {needs.clang_setting('/path/to/clang')}",
            )
        )
        return findings
    refusals = link_refusals(needs.entry_profile, needs.producer_llvm if needs.has_bitcode else None, clang.major)
    if NO_PROFILE in refusals or OTHER_ENTRIES in refusals:
        alternatives = [m for m in available_profiles() if m == clang.major]
        remake = (
            f"{needs.remake} with --target-clang {clang.major}"
            if alternatives
            else f"no profile exists for clang {clang.major} (profiles: {', '.join(map(str, available_profiles()))})"
        )
        findings.append(
            Finding(
                f"{clang.path} is clang {clang.version} but the bundle's offload entries follow clang "
                f"{needs.entry_profile}'s layout: the executable would register no kernels",
                f"use clang {needs.entry_profile} ({needs.clang_setting(f'clang-{needs.entry_profile}')}) or {remake}",
            )
        )
    elif UNREADABLE_BITCODE in refusals:
        findings.append(
            Finding(
                f"the bundle holds LLVM {needs.producer_llvm} bitcode, which clang {clang.major} cannot read",
                f"{needs.remake} with --portable (cubin device images, ELF host object)",
            )
        )
    try:
        refusal = host_refusal(
            needs.host_triple,
            clang_target_host(clang.path),
            clang.path,
            "cross-link with make LDFLAGS='--target={triple} ...'",
        )
    except OffloadError as e:  # `clang -dumpmachine` named no supported host
        refusal = (e.message, (f"check that `{clang.path} -dumpmachine` runs and names a supported host",))
    if refusal:
        problem, fix = refusal
        findings.append(Finding(problem, worded(fix, FLAG)))  # doctor is the command line's
    if clang.linker_wrapper is None:
        findings.append(Finding(f"no clang-linker-wrapper beside {clang.path}", f"install clang-tools-{clang.major}"))
    findings += sparse_tensor_runtime_findings(needs, library_folders(clang))
    if "cuda" in needs.offload_kinds:
        if cuda is None:
            findings.append(
                Finding(
                    "no CUDA toolkit found (ptxas, nvlink, fatbinary, libcudart)",
                    "install the CUDA toolkit or pass CUDA_PATH=/path/to/cuda",
                )
            )
        else:
            for name in ("ptxas", "nvlink", "fatbinary", "libcudart"):
                if getattr(cuda, name) is None:
                    findings.append(
                        Finding(
                            f"CUDA at {cuda.root} has no {name}", "install the full CUDA toolkit or pass CUDA_PATH="
                        )
                    )
            findings += library_findings(needs, cuda)
            if not refusals and fatbinary_wrapper_needed(load_profile(clang.major), cuda):
                findings.append(
                    Finding(
                        f"clang {clang.major}'s linker wrapper calls fatbinary with --image=, which CUDA "
                        f"{cuda.version}'s fatbinary rejects",
                        ("the shipped Makefile" if needs.shipped else "mlir-offload link")
                        + " puts its fatbinary wrapper first on PATH"
                        if wrapper_shipped
                        else "put mlir-offload's offload/data/scripts/fatbinary wrapper first on PATH",
                        blocking=not wrapper_shipped,
                    )
                )
    if "hip" in needs.offload_kinds:
        if clang.lld is None:
            findings.append(
                Finding(
                    f"no ld.lld beside {clang.path} (AMDGPU images are linked with lld)", f"install lld-{clang.major}"
                )
            )
        if rocm.libamdhip64 is None:
            findings.append(
                Finding(
                    "no libamdhip64 (HIP runtime) found", "install ROCm's HIP runtime or pass ROCM_PATH=/path/to/rocm"
                )
            )
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
        parts = [
            f"{n} {'ok' if getattr(cuda, n) else 'MISSING'}" for n in ("ptxas", "fatbinary", "nvlink", "libcudart")
        ]
        lines.append(f"CUDA {cuda.version or '(version unknown)'}: {cuda.root} ({', '.join(parts)})")
    lines.append(
        f"ROCm: {rocm.root or 'no install'} (device libs: {rocm.device_libs or 'not found'}; "
        f"libamdhip64: {rocm.libamdhip64 or 'not found'})"
    )
    return lines
