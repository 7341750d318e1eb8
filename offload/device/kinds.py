"""What differs between NVVM (CUDA) and ROCDL (HIP) serialization, as one record per target kind, tied to
its vendor's record (formats/vendors.py) by the record itself: the MLIR lowering and the rewrites it needs
first, the device libraries and their control settings, the symbols the target provides, and the function
attributes clang would set. The lowering (lowering.py) and the skeleton (skeleton.py) use nothing else."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from offload import trace
from offload.device.libraries import find_libdevice, find_rocm_device_libs
from offload.errors import OffloadError
from offload.formats.targets import Target
from offload.formats.vendors import CUDA, HIP, Vendor
from offload.options import CompileOptions, compile_option

# Device-side lowering shared by both kinds, run inside every gpu.module before the GPU conversion. The GPU
# conversions lower vector ops but not 1-D transfers (convert-vector-to-llvm's own patterns do, as upstream's
# RUN lines run it over gpu.modules).
COMMON_LOWERING = (
    "convert-vector-to-scf",
    "convert-scf-to-cf",
    "expand-strided-metadata",
    "lower-affine",
    "convert-vector-to-llvm",
)
COMMON_CLEANUP = ("canonicalize", "cse", "reconcile-unrealized-casts")

# Module flag behaviours (llvm/IR/Module.h): Error = 1, Override = 4, Max = 7.
FLAG_ERROR, FLAG_OVERRIDE, FLAG_MAX = 1, 4, 7


@dataclass(frozen=True)
class LibraryPlan:
    """Device libraries to link (paths) and module flags to add: (behaviour, name, i32 value)."""

    files: tuple[str, ...]
    module_flags: tuple[tuple[int, str, int], ...]
    # NVVM reflect values that only a process-wide LLVM option can set (llvmlite_backend.py applies them; opt
    # takes -nvvm-reflect-add).
    reflect: tuple[tuple[str, int], ...] = ()
    # What compile -v says of them, as (what, where): said where they are linked, once per image (the
    # cache key plans them too).
    shown: tuple[tuple[str, str], ...] = ()

    def show(self) -> None:
        for what, where in self.shown:
            trace.library(what, where)


@dataclass(frozen=True)
class TargetKind:
    vendor: Vendor
    gpu_conversion: Callable[[Target], str]  # the convert-gpu-to-* pass with its options
    library_prefixes: tuple[str, ...]  # calls that a device library must resolve
    provided_symbols: frozenset[str]  # declarations the target's toolchain resolves itself
    plan_libraries: Callable[[Target, CompileOptions, bool], LibraryPlan]
    # The attribute that makes a lowered llvm.func a kernel (an entry point) for this target: gpu.kernel
    # alone does not; the translation makes the function a kernel from this one.
    kernel_attribute: str = ""
    # Passes over the whole device module before the per-gpu.module ones (module-level passes).
    module_prelude: Callable[[Target], tuple[str, ...]] = lambda target: ()
    # Per-gpu.module passes before the common lowering (vendor ops that lower to the vendor dialect).
    vendor_prelude: tuple[str, ...] = ()
    # The LLVM passes of a bitcode image, which the target's device LTO optimizes whole (optimizer.py):
    # what must happen before that. None: clang's pre-link pipeline, lto-pre-link<On>.
    pre_link_passes: tuple[str, ...] | None = None
    # Where the target's backend wants stack allocations (AMDGPU: private, 5); 0: where the lowering puts them.
    alloca_address_space: int = 0
    # What the MLIR 22 conversion leaves unlowered, rewritten first (lowering.py): gpu.subgroup_broadcast
    # (NVVM has no lowering of it; ROCDL's uses readlane) ...
    expand_subgroup_broadcasts: bool = False
    # ... the negatef/subf elementwise ops on WMMA fragments (offload/mlir/wmma_workarounds.py) ...
    rewrite_mma_elementwise: bool = False
    # ... and cf.assert, which HIP device code reports through printf and a trap (hip_assert.py).
    lower_device_asserts: bool = False

    @property
    def name(self) -> str:
        """The vendor's offload kind ("cuda" | "hip"), which KINDS is keyed by as Target.offload_kind is."""
        return self.vendor.offload_kind

    def lowering_pipeline(self, target: Target) -> str:
        passes = (*self.vendor_prelude, *COMMON_LOWERING, self.gpu_conversion(target), *COMMON_CLEANUP)
        return f"builtin.module({''.join(p + ',' for p in self.module_prelude(target))}gpu.module({','.join(passes)}))"


def function_attributes(options) -> list[tuple[str, str]]:
    """String attributes clang puts on device functions for the float controls."""
    attributes = []
    if options.ftz or options.fast_math:
        attributes.append(("denormal-fp-math-f32", "preserve-sign,preserve-sign"))
    if options.fast_math:
        attributes += [
            ("no-infs-fp-math", "true"),
            ("no-nans-fp-math", "true"),
            ("no-signed-zeros-fp-math", "true"),
            ("approx-func-fp-math", "true"),
            ("unsafe-fp-math", "true"),
        ]
    return attributes


def _nvvm_conversion(target: Target) -> str:
    return f"{CUDA.lowering}{{index-bitwidth=64 use-bare-ptr-memref-call-conv=false}}"


def _nvvm_libraries(target: Target, options, needs_library: bool) -> LibraryPlan:
    ftz = 1 if (options.ftz or options.fast_math) else 0
    prec_sqrt = 1 if (options.prec_sqrt and not options.fast_math) else 0
    prec_div = 1 if (options.prec_div and not options.fast_math) else 0
    files = (find_libdevice(options.libdevice),) if needs_library else ()
    # __CUDA_FTZ has a module flag NVVMReflect reads; __CUDA_PREC_SQRT (LLVM 22) only an option.
    return LibraryPlan(
        files=files,
        module_flags=((FLAG_OVERRIDE, "nvvm-reflect-ftz", ftz),),
        reflect=(("__CUDA_PREC_SQRT", prec_sqrt), ("__CUDA_PREC_DIV", prec_div)),
        shown=tuple((f"libdevice ({target.arch})", path) for path in files),
    )


def _rocdl_conversion(target: Target) -> str:
    return f"{HIP.lowering}{{chipset={target.arch} index-bitwidth=64 runtime=HIP use-bare-ptr-memref-call-conv=false}}"


def _rocdl_libraries(target: Target, options, needs_library: bool) -> LibraryPlan:
    # clang's HIP code object v5: the flag and the matching oclc_abi_version control library.
    flags = ((FLAG_ERROR, "amdhsa_code_object_version", 500),)
    if not needs_library:
        return LibraryPlan(files=(), module_flags=flags)
    folder = Path(find_rocm_device_libs(options.rocm_device_lib_path))

    def on_off(name: str, on: bool) -> str:
        return f"oclc_{name}_{'on' if on else 'off'}.bc"

    names = [
        "ocml.bc",
        "ockl.bc",
        on_off("finite_only", options.fast_math),
        on_off("unsafe_math", options.fast_math),
        on_off("daz_opt", options.ftz or options.fast_math),
        on_off("correctly_rounded_sqrt", options.prec_sqrt and not options.fast_math),
        on_off("wavefrontsize64", target.wavefront_size == 64),
        f"oclc_isa_version_{target.isa_version}.bc",
        "oclc_abi_version_500.bc",
    ]
    missing = [n for n in names if not (folder / n).is_file()]
    if missing:
        raise OffloadError(
            (
                f"the ROCm device libraries in '{folder}' lack {', '.join(missing)} needed for {target.arch}; fix: "
                "point ",
                compile_option("rocm_device_lib_path"),
                " or ROCM_PATH at device libraries that support this GPU",
            )
        )
    return LibraryPlan(
        files=tuple(str(folder / n) for n in names),
        module_flags=flags,
        shown=((f"ROCm device libraries ({target.arch})", f"{folder}: {' '.join(names)}"),),
    )


NVVM = TargetKind(
    vendor=CUDA,
    gpu_conversion=_nvvm_conversion,
    library_prefixes=("__nv_",),
    # vprintf (gpu.printf) is resolved by ptxas/the CUDA runtime, not by a bitcode library.
    provided_symbols=frozenset({"vprintf", "malloc", "free", "__assertfail"}),
    plan_libraries=_nvvm_libraries,
    # As upstream's gpu-lower-to-nvvm-pipeline: nvgpu ops (mbarrier, TMA, wgmma) to NVVM, then the NVVM
    # ops that have no LLVM intrinsic (e.g. mbarrier.try_wait.parity) to inline PTX.
    vendor_prelude=("convert-nvgpu-to-nvvm", "convert-nvvm-to-llvm"),
    kernel_attribute="nvvm.kernel",
    # Our __CUDA_* values into libdevice's __nvvm_reflect calls, which the target would resolve with its
    # own; nothing inlined (the O0 pipeline's always-inline copied libdevice into every kernel: 9x the
    # bitcode of 1000 kernels, for the same SASS after the target's LTO).
    pre_link_passes=("nvvm-reflect",),
    expand_subgroup_broadcasts=True,
    rewrite_mma_elementwise=True,
)

ROCDL = TargetKind(
    vendor=HIP,
    gpu_conversion=_rocdl_conversion,
    library_prefixes=("__ocml_", "__ockl_", "__oclc_"),
    provided_symbols=frozenset(),
    plan_libraries=_rocdl_libraries,
    kernel_attribute="rocdl.kernel",
    # Math ops to __ocml_* calls first: the AMDGPU backend cannot lower some intrinsics (llvm.tanh).
    module_prelude=lambda target: (f"convert-math-to-rocdl{{chipset={target.arch}}}",),
    alloca_address_space=5,
    lower_device_asserts=True,
)

KINDS = {kind.name: kind for kind in (NVVM, ROCDL)}
