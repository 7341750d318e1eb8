"""The one device-stage skeleton (modelled on MLIR's ModuleToObject): the LLVM stages of one target's image,

    link the gpu.modules -> link --link-bitcode libraries -> link the device libraries the code calls
    -> internalize + optimize -> check unresolved calls -> bitcode -> to object (native images only)

in this order whichever LLVM runs them. The last step is the compile's codegen hook (native.py: PTX and
ptxas for NVVM, an AMDGPU object by llvmlite or llc for ROCDL): it runs where the image's other steps ran,
so the images of several targets get their native code side by side. Two backends do the steps
(optimizer.py says which runs): LLVM's tools as processes (llvm_tools.py) or llvmlite in-process
(llvmlite_backend.py). What differs between the vendors is data (kinds.py, formats/vendors.py). With
`device_stage_folder` set, the skeleton writes each stage's output there (`dump_stage`), for -save-temps."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Protocol

from offload import trace
from offload.device.images import DeviceImage, LoweredModule, image_symbols
from offload.device.kinds import KINDS, LibraryPlan, TargetKind
from offload.device.optimizer import Optimizer
from offload.errors import Location, OffloadError
from offload.formats.targets import Target
from offload.fsutil import atomic_write
from offload.options import CompileOptions, compile_option
from offload.packager.detect import is_bitcode

# The stages whose output dump_stage writes, in order.
STAGES = ("lowered", "linked", "user-linked", "libraries-linked", "optimized")


@dataclass(frozen=True)
class SerializeJob:
    """What the LLVM stages of one target need: plain data, so that a forked child can run them."""

    lowered: list[LoweredModule]
    target: Target
    options: CompileOptions
    path: str  # the program's file (its stem names dumped stages)
    optimizer: Optimizer
    lto_pre_link: bool = False  # the image stays bitcode the target's device LTO optimizes (optimizer.py)
    # The to-object step (native.Codegen): the image's native code; None: the image stays bitcode.
    to_object: Callable[[DeviceImage], DeviceImage] | None = None


class Stages(Protocol):
    """A backend: each step takes the module so far (the backend's own handle) and returns the next."""

    def link_modules(self, lowered: list[LoweredModule]): ...
    def link_user_bitcode(self, module, files: tuple[str, ...]): ...
    def link_libraries(self, module, plan: LibraryPlan): ...
    def optimize(
        self, module, keep: list[str], reflect: tuple[tuple[str, int], ...], opt_level: int, lto_pre_link: bool
    ): ...
    def functions(self, module) -> Iterable[tuple[str, bool]]: ...  # (name, is a declaration)
    def call_graph(self, module) -> dict[str, set[str]]: ...
    def bitcode(self, module) -> bytes: ...


def serialize_image(job: SerializeJob) -> DeviceImage:
    """The skeleton: one target's image from its lowered gpu.modules."""
    backend: Callable[[SerializeJob], AbstractContextManager[Stages]]
    if job.optimizer.in_process:
        from offload.device.llvmlite_backend import LlvmliteStages as backend
    else:
        from offload.device.llvm_tools import LlvmToolsStages as backend
    kind = KINDS[job.target.offload_kind]
    kernels, user_globals, exported = image_symbols(job.lowered)
    for lowered in job.lowered:
        dump_stage(job, f"lowered-{lowered.name}", lowered.llvm_ir.encode())
    with backend(job) as stages:
        module = stages.link_modules(job.lowered)
        dump_stage(job, "linked", stages, module)
        if job.options.link_bitcode:
            module = stages.link_user_bitcode(module, job.options.link_bitcode)
            dump_stage(job, "user-linked", stages, module)
        # What the code calls shows only now: the ROCDL translation itself adds __ockl_* calls.
        plan = kind.plan_libraries(
            job.target, job.options, declares_call_into(stages.functions(module), kind.library_prefixes)
        )
        plan.show()
        module = stages.link_libraries(module, plan)
        dump_stage(job, "libraries-linked", stages, module)
        module = stages.optimize(module, kernels + user_globals, plan.reflect, job.options.opt_level, job.lto_pre_link)
        dump_stage(job, "optimized", stages, module)
        declared = [name for name, declaration in stages.functions(module) if declaration]
        check_unresolved(
            declared, lambda: stages.call_graph(module), kind, job.target, kernels, exported, job.options.gpu_rdc
        )
        bitcode = stages.bitcode(module)
    image = DeviceImage(target=job.target, bitcode=bitcode, kernels=kernels, globals=user_globals)
    if job.to_object is None:
        return image
    with trace.step(f"codegen {job.target.arch}"):
        return job.to_object(image)


def dump_stage(job: SerializeJob, stage: str, stages_or_data, module=None) -> None:
    """Write one stage's output to options.device_stage_folder (if set) as
    <program stem>.<arch>.<stage>.bc (.ll for IR text)."""
    folder = job.options.device_stage_folder
    if not folder:
        return
    data = stages_or_data if module is None else stages_or_data.bitcode(module)
    stem = os.path.splitext(os.path.basename(job.path))[0] or "stdin"
    suffix = "bc" if is_bitcode(data) else "ll"
    atomic_write(os.path.join(folder, f"{stem}.{job.target.arch}.{stage}.{suffix}"), data)


def declares_call_into(functions: Iterable[tuple[str, bool]], prefixes: tuple[str, ...]) -> bool:
    """Whether a module (its (name, is declaration) functions) calls into a device library."""
    return any(declaration and name.startswith(prefixes) for name, declaration in functions)


def check_unresolved(
    declared: list[str],
    call_graph,
    kind: TargetKind,
    target: Target,
    kernels: list[str],
    exported: dict[str, Location],
    relocatable: bool = False,
) -> None:
    """A declared non-intrinsic function the target does not provide is an error naming the symbol and
    a kernel that calls it: the image would otherwise fail only at the target's device link.
    `relocatable` (-fgpu-rdc): the program's own declarations may be defined by other device code of the
    link (CUDA objects compiled with -fgpu-rdc); a device-library function still must resolve here.
    call_graph() gives caller -> callees, asked for only when there is an error to report."""
    unresolved = sorted(
        name
        for name in declared
        if not name.startswith("llvm.")
        and name not in kind.provided_symbols
        and not (relocatable and not name.startswith(kind.library_prefixes))
    )
    if not unresolved:
        return
    callers = call_graph()
    symbol = unresolved[0]
    kernel = next((k for k in kernels if symbol in _reachable(k, callers)), None)
    where = f"called from kernel '{kernel}'" if kernel else "referenced by the device code"
    hint = ""
    if symbol.startswith(kind.library_prefixes):
        hint = " (a device-library function the library does not define)"
    more = f" (and {len(unresolved) - 1} more: {', '.join(unresolved[1:4])})" if len(unresolved) > 1 else ""
    raise OffloadError(
        (
            f"unresolved device function '{symbol}' {where} for {target.arch}{hint}{more}; "
            "define it in a gpu.module, pass ",
            compile_option("link_bitcode", "FILE.bc"),
            ", or compile with ",
            compile_option("gpu_rdc", True),
            " to take it from CUDA device code at link",
        ),
        exported.get(kernel) if kernel else None,
    )


def _reachable(root: str, graph: dict[str, set[str]]) -> set[str]:
    seen, stack = set(), [root]
    while stack:
        name = stack.pop()
        for callee in graph.get(name, ()):
            if callee not in seen:
                seen.add(callee)
                stack.append(callee)
    return seen
