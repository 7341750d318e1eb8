"""`cf.assert` in HIP device code, which MLIR 22's convert-gpu-to-rocdl cannot lower (its cf-to-LLVM
pattern references a global it never makes): lowered before the pipeline as HIP's own `__assert_fail`
(clang's device headers) behaves: print `FILE:LINE: FUNCTION: Device-side assertion `MESSAGE' failed.`
through ockl's printf, then trap, which ends the kernel with an error the host's next call reports."""

from __future__ import annotations

from offload.mlir.frontend import location_of

# HIP's __assert_fail format (hip/amd_detail/amd_device_functions.h).
ASSERT_FORMAT = "{file}:{line}: {function}: Device-side assertion `{message}' failed.\n"
FUNCTIONS = ("gpu.func", "func.func", "llvm.func")


def lower_device_asserts(device, path: str, ir) -> None:
    """Each cf.assert becomes `scf.if (not cond) { gpu.printf ...; llvm.intr.trap }`."""
    from mlir.dialects import arith, scf

    found = []

    def collect(op):
        if op.name == "cf.assert":
            found.append(op)
        return ir.WalkResult.ADVANCE

    device.operation.walk(collect)
    i1 = ir.IntegerType.get_signless(1)
    for op in found:
        where = location_of(op.location, path)
        message = ir.StringAttr(op.attributes["msg"]).value
        text = ASSERT_FORMAT.format(
            file=where.file, line=where.line or 0, function=_enclosing_function(op, ir), message=message
        )
        with ir.InsertionPoint(op), op.location:
            true = arith.ConstantOp(i1, 1).result
            failed = arith.XOrIOp(op.operands[0], true).result
            branch = scf.IfOp(failed)
            with ir.InsertionPoint(branch.then_block):
                ir.Operation.create("gpu.printf", attributes={"format": ir.StringAttr.get(text.replace("%", "%%"))})
                ir.Operation.create("llvm.intr.trap")
                scf.YieldOp([])
        op.erase()


def _enclosing_function(op, ir) -> str:
    parent = op.operation.parent
    while parent is not None and parent.name not in FUNCTIONS:
        parent = parent.parent
    if parent is None or "sym_name" not in parent.attributes:
        return "(unknown)"
    return ir.StringAttr(parent.attributes["sym_name"]).value
