"""What `compile --emulate` refuses: device operations the CPU emulator (docs/emulator.md) cannot give
the hardware's meaning, each refused with one located line naming the op, before any work.

The table is data: an op-name prefix -> why. The user's own inline assembly cannot be emulated (the few
PTX idioms inside libdevice and MLIR's own lowerings are, by the emulator's pass); Blackwell's tensor
cores are not modelled. Hopper's units (mbarriers, TMA and bulk copies, wgmma, stmatrix, setmaxnreg,
clusters) are emulated (offload/data/emulator/hopper.h, wgmma.h, cluster.h)."""

from __future__ import annotations

from offload.errors import OffloadError
from offload.options import compile_option

REFUSED_PREFIXES = (
    ("llvm.inline_asm", "inline assembly"),
    ("nvvm.tcgen05.", "Blackwell's tensor core generation 5"),
)


def refusal(op_name: str) -> str | None:
    """Why an op cannot be emulated, or None."""
    for prefix, why in REFUSED_PREFIXES:
        if op_name.startswith(prefix):
            return why
    return None


def check_emulatable(program) -> None:
    """Refuse the first device op of `program` (an offload.mlir.frontend.Program) that cannot be emulated.
    Inline assembly is not judged here: by now it may be MLIR's own (convert-nvgpu-to-nvvm writes mma.sp.sync
    as inline PTX), which the emulator's pass recognizes; the user's was refused by check_device_source."""
    for module in program.gpu_modules():
        _refuse_first(module, program.path, skip=("llvm.inline_asm",))


def check_device_source(module, path: str) -> None:
    """The same check on the program as written, before outlining and the nvgpu conversion: the refused op
    is named as the user wrote it (`nvgpu.mbarrier.init`, not the `nvvm` op it becomes). Device code is
    what gpu.module and gpu.launch hold; the host's own ops (inline assembly included) run on the host."""
    import mlir.ir as ir

    device = []

    def visit(op):
        if op.name in ("gpu.module", "gpu.launch"):
            device.append(op)
            return ir.WalkResult.SKIP
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    for op in device:
        _refuse_first(op, path)


def _refuse_first(root, path: str, skip: tuple[str, ...] = ()) -> None:
    import mlir.ir as ir

    from offload.mlir.frontend import location_of

    found = []

    def visit(op):
        why = None if op.name in skip else refusal(op.name)
        if why is not None:
            found.append((op, why))
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    root.walk(visit, ir.WalkOrder.PRE_ORDER)
    if found:
        op, why = found[0]
        raise OffloadError(
            (compile_option("emulate", True), f": '{op.name}' ({why}) cannot be emulated on the CPU"),
            location_of(op.location, path),
        )
