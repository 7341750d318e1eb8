"""One record per GPU vendor (CUDA, HIP), as MLIR's target attributes are one record each: everything
the build side and the target side need to know about a vendor, and nothing else anywhere.

Keyed by offload kind ("cuda" | "hip"), the name the profiles' kind values use. The records are data: the
functions for a vendor are mapped from its record where they live (offload/serialize/native.py CODEGEN_HOOKS,
offload/toolchain/tools.py TOOLKIT_FINDERS)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from offload.errors import Mention, OffloadError


@dataclass(frozen=True)
class Vendor:
    offload_kind: str  # "cuda" | "hip": the key of the profiles' [offload_kind] and section tables
    triple: str  # device target triple
    lowering: str  # the MLIR pass lowering a gpu.module (offload/serialize/kinds.py adds its options)
    api_prefix: str  # runtime API names: <prefix>Malloc, <prefix>LaunchKernel, ...
    link_library: str  # what the executable links: -l<link_library>
    library_dirs: tuple[str, ...]  # toolkit sub-folders holding it for this machine's CPU, in search order
    host_library_dirs: tuple[str, ...]  # ... for a host triple: {cuda_target}, {multiarch} of offload.formats.hosts
    toolkit_path_flag: str  # the clang flag naming the toolkit folder
    quiet_flags: tuple[str, ...]  # clang flags silencing version warnings irrelevant to a link
    device_section: str  # where the linker wrapper puts the device images in the executable
    register_function: str  # what the wrapper's registration code calls with that section
    native_image: str  # the native image kind (offload.packager.ImageKind member name)
    native_elf_machine: int  # e_machine of that image's ELF file (EM_CUDA, EM_AMDGPU)
    separate_kernel_handle: bool  # HIP: a kernel's handle is a constant global pointing to the host stub
    # (link --cudart mode, libraries -l...) as nvcc's --cudart; "shared" is -l<link_library>
    runtime_variants: tuple = ()
    # Dynamic shared memory above this many bytes needs the kernel's opt-in attribute first (None: no opt-in).
    dynamic_shared_opt_in_above: int | None = None
    toolkit_name: str = ""  # in messages: "CUDA toolkit", "ROCm"
    toolkit_key: str = ""  # the mlir-offload.toml key (and link/doctor flag) naming its folder
    toolkit_variable: str = ""  # the shipped Makefile's and build.sh's variable naming its folder
    warp_size: int | None = None  # threads per warp on every arch (None: the arch decides, targets.py)
    ptx: bool = False  # its device code has a PTX form (compute_XX, --ptx, PTX beside a bundle)
    fatbinary: bool = False  # the toolkit's fatbinary packs the executable's images (clang's wrapper calls it)
    toolkit_archs: bool = False  # each toolkit release builds a range of archs (offload/data/cuda/toolkit-archs.toml)
    cluster_launch: bool = False  # thread-block clusters (cudaLaunchKernelExC)
    tensor_maps: bool = False  # TMA descriptors (cuTensorMapEncodeTiled)
    llvmlite_assembles_inline_asm: bool = True  # False: llvmlite has no assembler for its inline asm (llc does)
    # What a source compiled to join the bundles' device link needs beyond -fgpu-rdc --offload-new-driver
    # (config --cflags): CUDA keeps its device code as bitcode only with -foffload-lto (measured: without it,
    # a <<<>>> launch of an MLIR kernel fails nvlink's "not declared __global__ in all source files").
    source_device_link_flags: tuple[str, ...] = ()
    # Package-data folder of stand-ins for headers clang's wrapper headers include and some toolkits lack:
    # one sub-folder per header, put on the include path only where the toolkit's include/ lacks it.
    header_gaps: str = ""


CUDA = Vendor(
    offload_kind="cuda",
    triple="nvptx64-nvidia-cuda",
    lowering="convert-gpu-to-nvvm",
    api_prefix="cuda",
    link_library="cudart",
    library_dirs=("lib64", "lib"),
    host_library_dirs=("targets/{cuda_target}/lib",),
    toolkit_path_flag="--cuda-path",
    quiet_flags=("-Wno-unknown-cuda-version",),
    source_device_link_flags=("-foffload-lto",),
    header_gaps="cuda/header-gaps",
    device_section=".nv_fatbin",
    register_function="__cudaRegisterFatBinary",
    native_image="CUBIN",
    native_elf_machine=190,
    separate_kernel_handle=False,
    runtime_variants=(("shared", ("cudart",)), ("static", ("cudart_static", "dl", "pthread", "rt")), ("none", ())),
    dynamic_shared_opt_in_above=48 * 1024,
    toolkit_name="CUDA toolkit",
    toolkit_key="cuda-path",
    toolkit_variable="CUDA_PATH",
    warp_size=32,
    ptx=True,
    fatbinary=True,
    toolkit_archs=True,
    cluster_launch=True,
    tensor_maps=True,
)

HIP = Vendor(
    offload_kind="hip",
    triple="amdgcn-amd-amdhsa",
    lowering="convert-gpu-to-rocdl",
    api_prefix="hip",
    link_library="amdhip64",
    library_dirs=("lib",),
    host_library_dirs=("lib/{multiarch}",),
    toolkit_path_flag="--rocm-path",
    quiet_flags=(),
    device_section=".hip_fatbin",
    register_function="__hipRegisterFatBinary",
    native_image="OBJECT",
    native_elf_machine=224,
    separate_kernel_handle=True,
    runtime_variants=(("shared", ("amdhip64",)), ("none", ())),
    toolkit_name="ROCm",
    toolkit_key="rocm-path",
    toolkit_variable="ROCM_PATH",
    llvmlite_assembles_inline_asm=False,
)


def runtime_modes() -> tuple[str, ...]:
    """Every link --cudart mode some vendor has (nvcc's names), in the records' order."""
    return tuple(dict.fromkeys(mode for vendor in VENDORS.values() for mode, _ in vendor.runtime_variants))


# Host math ops call libm (math.exp -> expf): nvcc's g++ and hipcc's clang++ link it, clang's C driver does not.
HOST_SYSTEM_LIBRARIES = ("m",)


def runtime_libraries(vendor: Vendor, mode: str = "shared") -> tuple[str, ...]:
    """The libraries (-l names) of link --cudart=MODE for this vendor."""
    variants = dict(vendor.runtime_variants) or {"shared": (vendor.link_library,)}
    if mode not in variants:
        raise OffloadError(
            (Mention("cudart", mode, joined=True), f" is not one of {', '.join(variants)} for {vendor.offload_kind}")
        )
    return variants[mode]


def runtime_named(vendor: Vendor, arguments) -> bool:
    """Whether the user's link arguments already name one of the vendor's runtime libraries (-lcudart_static,
    or the library file): then link adds no -l of its own, so -lcudart_static does not also pull libcudart.so."""
    names = {libs[0] for _, libs in vendor.runtime_variants if libs} | {vendor.link_library}
    for argument in arguments:
        if argument.startswith("-l") and (argument[2:] in names or argument[2:].lstrip(":").split(".")[0][3:] in names):
            return True
        base = os.path.basename(argument)
        if not argument.startswith("-") and base.startswith("lib") and base.split(".")[0][3:] in names:
            return True
    return False


def runtime_link_flags(
    vendor: Vendor, root: str | None, library_dirs: list[str], mode: str = "shared", libraries_used=()
) -> list[str]:
    """The clang flags that link a vendor's runtime, in the one order link, `config --ldflags` and the
    shipped build.sh use: the toolkit folder (None: not passed), its library folders, quiet flags, -l
    (the bundle's own libraries, e.g. cusparse, which call the runtime, then the libraries of link
    --cudart=MODE)."""
    words = [f"{vendor.toolkit_path_flag}={root}"] if root else []
    words += [f"-L{folder}" for folder in library_dirs]
    libraries = (*libraries_used, *runtime_libraries(vendor, mode), *HOST_SYSTEM_LIBRARIES)
    return words + [*vendor.quiet_flags, *(f"-l{library}" for library in libraries)]


VENDORS = {vendor.offload_kind: vendor for vendor in (CUDA, HIP)}

# The libraries a bundle's record may name (the gpu dialect's sparse ops: offload/annotations/sparse_runtime.py),
# by -l name: the prefix of the functions an executable calls in it (`verify` lists them).
LIBRARY_FUNCTION_PREFIXES = {"cusparse": "cusparse", "cusparseLt": "cusparseLt", "hipsparse": "hipsparse"}


def library_of_function(name: str) -> str | None:
    """The library (-l name) whose function `name` is: the longest matching prefix (cusparseLt before cusparse)."""
    matches = [library for library, prefix in LIBRARY_FUNCTION_PREFIXES.items() if name.startswith(prefix)]
    return max(matches, key=lambda library: len(LIBRARY_FUNCTION_PREFIXES[library]), default=None)


def vendor_for(offload_kind: str) -> Vendor:
    try:
        return VENDORS[offload_kind]
    except KeyError:
        raise OffloadError(f"unknown offload kind '{offload_kind}' (known: {', '.join(VENDORS)})") from None


def vendor_of_triple(triple: str) -> Vendor | None:
    """The vendor whose device triple `triple` is (its architecture part: nvptx64, amdgcn)."""
    arch = triple.split("-", 1)[0]
    return next((v for v in VENDORS.values() if v.triple.split("-", 1)[0] == arch), None)
