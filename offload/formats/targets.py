"""Offload targets: which GPU architectures LLVM 22 knows, and the PTX version / wavefront size that fit
each. Everything is checked here, before an arch or feature string can reach LLVM (whose fatal errors
would kill the process)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from offload.errors import Mention, OffloadError
from offload.formats.vendors import CUDA, HIP, vendor_for

NVPTX_TRIPLE, AMDGPU_TRIPLE = CUDA.triple, HIP.triple

# Minimum PTX ISA version LLVM 22's NVPTX backend accepts for each SM (measured with llc-22 over the
# processors `llc -mtriple=nvptx64 -mcpu=help` lists; mirrors llvm/lib/Target/NVPTX/NVPTX.td).
NVPTX_MIN_PTX = {
    "sm_50": 60,
    "sm_52": 60,
    "sm_53": 60,
    "sm_60": 60,
    "sm_61": 60,
    "sm_62": 60,
    "sm_70": 60,
    "sm_72": 61,
    "sm_75": 63,
    "sm_80": 70,
    "sm_86": 71,
    "sm_87": 74,
    "sm_88": 90,
    "sm_89": 78,
    "sm_90": 78,
    "sm_90a": 80,
    "sm_100": 86,
    "sm_100a": 86,
    "sm_100f": 88,
    "sm_101": 86,
    "sm_101a": 86,
    "sm_101f": 88,
    "sm_103": 88,
    "sm_103a": 88,
    "sm_103f": 88,
    "sm_110": 90,
    "sm_110a": 90,
    "sm_110f": 90,
    "sm_120": 87,
    "sm_120a": 87,
    "sm_120f": 88,
    "sm_121": 88,
    "sm_121a": 88,
    "sm_121f": 88,
}
# PTX versions LLVM 22 can emit (its +ptxNN features).
NVPTX_PTX_VERSIONS = (
    60,
    61,
    62,
    63,
    64,
    65,
    70,
    71,
    72,
    73,
    74,
    75,
    76,
    77,
    78,
    80,
    81,
    82,
    83,
    84,
    85,
    86,
    87,
    88,
    90,
)
# Our floor: every warp-synchronous intrinsic the lowering uses exists in PTX 7.0 (CUDA 11).
PTX_FLOOR = 70

# AMDGPU processors LLVM 22 knows (llvm/lib/Target/AMDGPU/GCNProcessors.td; gfx940/941 were removed
# in LLVM 20 in favour of gfx942). GCN/CDNA (gfx6..gfx9) run wave64; RDNA (gfx10+) default to wave32.
AMDGPU_PROCESSORS = (
    "gfx600",
    "gfx601",
    "gfx602",
    "gfx700",
    "gfx701",
    "gfx702",
    "gfx703",
    "gfx704",
    "gfx705",
    "gfx801",
    "gfx802",
    "gfx803",
    "gfx805",
    "gfx810",
    "gfx900",
    "gfx902",
    "gfx904",
    "gfx906",
    "gfx908",
    "gfx909",
    "gfx90a",
    "gfx90c",
    "gfx942",
    "gfx950",
    "gfx1010",
    "gfx1011",
    "gfx1012",
    "gfx1013",
    "gfx1030",
    "gfx1031",
    "gfx1032",
    "gfx1033",
    "gfx1034",
    "gfx1035",
    "gfx1036",
    "gfx1100",
    "gfx1101",
    "gfx1102",
    "gfx1103",
    "gfx1150",
    "gfx1151",
    "gfx1152",
    "gfx1153",
    "gfx1200",
    "gfx1201",
    "gfx1250",
    "gfx1251",
)


@dataclass(frozen=True)
class Target:
    offload_kind: str  # "cuda" | "hip"
    arch: str  # "sm_80", "gfx90a"
    triple: str  # NVPTX_TRIPLE | AMDGPU_TRIPLE
    features: str  # e.g. "+ptx80" (CUDA); "" (HIP: the processor's defaults)

    @property
    def wavefront_size(self) -> int:
        fixed = vendor_for(self.offload_kind).warp_size
        if fixed is not None:
            return fixed
        if "+wavefrontsize64" in self.features.split(","):
            return 64
        if "+wavefrontsize32" in self.features.split(","):
            return 32
        return 64 if amdgpu_generation(self.arch) < 10 else 32

    @property
    def isa_version(self) -> str:
        """The ROCm device-library ISA name: gfx90a -> '90a', gfx1030 -> '1030'."""
        return self.arch[len("gfx") :]


def amdgpu_generation(arch: str) -> int:
    digits = arch[len("gfx") :]
    return int(digits[:-2]) if len(digits) >= 3 else int(digits[0])


# Device debug information (-G) in PTX: its DWARF sections hold label differences, which ptxas takes from
# PTX ISA 7.5 on (measured with CUDA 13's ptxas).
DEBUG_PTX_FLOOR = 75


def with_debug_ptx(target: Target) -> Target:
    """`target` with a PTX version that can carry device debug information (CUDA; others unchanged)."""
    if not vendor_for(target.offload_kind).ptx:
        return target
    return replace(target, features=f"+ptx{max(NVPTX_MIN_PTX[target.arch], DEBUG_PTX_FLOOR)}")


def ptx_feature_for(arch: str) -> str:
    return f"+ptx{max(NVPTX_MIN_PTX[arch], PTX_FLOOR)}"


# compute_XX asks for PTX the driver JIT-compiles (nvcc's virtual architecture).
PTX_ARCH_PREFIX = "compute_"


def cuda_arch_spelling(arch: str) -> str:
    """The sm_XX name of the spellings users bring from CMake/Spack (`80`, `90a`) and nvcc (`compute_80`)."""
    bare = arch[len(PTX_ARCH_PREFIX) :] if arch.startswith(PTX_ARCH_PREFIX) else arch
    if bare[:1].isdigit() and f"sm_{bare}" in NVPTX_MIN_PTX:
        return f"sm_{bare}"
    return arch


def ptx_only_archs(spec: str | None) -> tuple[str, ...]:
    """The sm_XX names of the compute_XX (PTX only) architectures of an --offload-arch list."""
    return tuple(
        sorted(
            {
                cuda_arch_spelling(part.strip())
                for part in (spec or "").split(",")
                if part.strip().startswith(PTX_ARCH_PREFIX)
            }
        )
    )


def target_for(arch: str) -> Target:
    """The Target of one arch name, or an error listing the valid ones."""
    arch = cuda_arch_spelling(arch)
    if arch in NVPTX_MIN_PTX:
        return Target("cuda", arch, NVPTX_TRIPLE, ptx_feature_for(arch))
    if arch in AMDGPU_PROCESSORS:
        return Target("hip", arch, AMDGPU_TRIPLE, "")
    if arch.lower() in NVPTX_MIN_PTX or arch.lower() in AMDGPU_PROCESSORS:
        raise OffloadError(
            f"unknown offload architecture '{arch}': did you mean '{arch.lower()}'? (arch names are lower case)"
        )
    if arch.startswith("gfx") and ":" in arch and arch.split(":")[0] in AMDGPU_PROCESSORS:
        raise OffloadError(
            f"target-id features ('{arch}') are not supported: use '{arch.split(':')[0]}' "
            "(code for the default xnack/sramecc setting, which runs in either mode)"
        )
    if arch.startswith("sm_") or arch.startswith("compute_"):
        valid = ", ".join(NVPTX_MIN_PTX)
        raise OffloadError(f"unknown CUDA architecture '{arch}' (valid: {valid})")
    if arch.startswith("gfx"):
        valid = ", ".join(AMDGPU_PROCESSORS)
        raise OffloadError(f"unknown AMDGPU architecture '{arch}' (valid: {valid})")
    raise OffloadError(
        f"unknown offload architecture '{arch}': expected sm_XX (CUDA) or gfxNNN (HIP), e.g. sm_80, sm_90, gfx90a"
    )


def parse_offload_arch(spec: str) -> list[Target]:
    """'sm_80,sm_90,gfx90a' -> one Target each, in order, duplicates dropped."""
    names = [part.strip() for part in (spec or "").split(",")]
    if not any(names):
        raise OffloadError((Mention("offload_arch"), " is empty: name at least one architecture, e.g. sm_80 or gfx90a"))
    targets: list[Target] = []
    for name in names:
        if not name:
            raise OffloadError(("empty architecture name in ", Mention("offload_arch", f"'{spec}'")))
        target = target_for(name)
        if target not in targets:
            targets.append(target)
    return targets


def check_ptx_feature(target: Target) -> None:
    """A user-given PTX feature must be one LLVM knows and new enough for the arch (else LLVM aborts)."""
    for feature in filter(None, target.features.split(",")):
        if not feature.startswith("+ptx"):
            continue
        version = feature[len("+ptx") :]
        if not version.isdigit() or int(version) not in NVPTX_PTX_VERSIONS:
            raise OffloadError(
                f"unknown PTX feature '{feature}' (valid: " + ", ".join(f"+ptx{v}" for v in NVPTX_PTX_VERSIONS) + ")"
            )
        if int(version) < NVPTX_MIN_PTX[target.arch]:
            raise OffloadError(
                f"{feature} is too old for {target.arch}: it needs +ptx{NVPTX_MIN_PTX[target.arch]} or newer"
            )
