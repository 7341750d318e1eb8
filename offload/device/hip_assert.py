"""`cf.assert` in HIP device code, which MLIR 22's convert-gpu-to-rocdl cannot lower (its cf-to-LLVM
pattern references a global it never makes): lowered before the pipeline as HIP's own `__assert_fail`
(clang's device headers) behaves: print `FILE:LINE: (unknown) Device-side assertion `MESSAGE' failed.`
through ockl's printf, then trap, which ends the kernel with an error the host's next call reports. The
line is the one upstream MLIR's own ROCDL lowering of cf.assert prints (its ROCM/assert program checks it):
that lowering passes no function name, so HIP's `FUNCTION` slot reads `(unknown)`."""

from __future__ import annotations

from offload.mlir.frontend import location_of
from offload.mlir.walk import ops_where

# The device-assert line as upstream MLIR's ROCDL lowering of cf.assert prints it.
ASSERT_FORMAT = "{file}:{line}: (unknown) Device-side assertion `{message}' failed.\n"


def lower_device_asserts(device, path: str, ir) -> None:
    """Each cf.assert becomes `scf.if (not cond) { gpu.printf ...; llvm.intr.trap }`."""
    from mlir.dialects import arith, scf

    found = ops_where(device.operation, lambda op: op.name == "cf.assert", ir)
    i1 = ir.IntegerType.get_signless(1)
    for op in found:
        where = location_of(op.location, path)
        message = ir.StringAttr(op.attributes["msg"]).value
        text = ASSERT_FORMAT.format(file=where.file, line=where.line or 0, message=message)
        with ir.InsertionPoint(op), op.location:
            true = arith.ConstantOp(i1, 1).result
            failed = arith.XOrIOp(op.operands[0], true).result
            branch = scf.IfOp(failed)
            with ir.InsertionPoint(branch.then_block):
                ir.Operation.create("gpu.printf", attributes={"format": ir.StringAttr.get(text.replace("%", "%%"))})
                ir.Operation.create("llvm.intr.trap")
                scf.YieldOp([])
        op.erase()
