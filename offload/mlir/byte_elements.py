"""Loads and stores of memref elements narrower than a byte (i1 ... i7), rewritten to bytes before the
LLVM lowering. MLIR 22's memref-to-LLVM patterns assert that an integer element is at least 8 bits wide
(MemRefToLLVM.cpp, LoadOpLowering/StoreOpLowering): with an assertions build of MLIR, as the Python
bindings are, `memref.store %b, %m[%i] : memref<?xi1>` kills the lowering (SIGABRT), host code and
device code alike. LLVM lays such an element out as one byte, so the same access through a byte view of
the memref (a cast the LLVM lowering folds: both memref types become the same descriptor) is the same
memory operation: the value zero-extended to i8 and stored, or the byte loaded and truncated, as LLVM
legalizes an i1 store or load itself."""

from __future__ import annotations

from offload.mlir.walk import ops_where

# Ops that access one element, and where their memref operand is (after the stored value for stores).
ELEMENT_ACCESSES = {"memref.load": 0, "affine.load": 0, "memref.store": 1, "affine.store": 1}


def widen_narrow_element_accesses(module) -> None:
    """Every load/store of a memref whose element is an integer narrower than 8 bits, in `module`
    (an MLIR operation), goes through an i8 view of that memref."""
    import mlir.ir as ir

    found = ops_where(module, lambda op: _is_narrow_access(op, ir), ir)
    if not found:
        return
    from mlir.dialects import arith  # its op classes cost 4 ms: only for a program that has such an access

    i8 = ir.IntegerType.get_signless(8)
    for op in found:
        at = ELEMENT_ACCESSES[op.name]
        memref = op.operands[at]
        narrow = memref.type.maybe_downcast()
        byte_view = ir.MemRefType.get(narrow.shape, i8, narrow.layout, narrow.memory_space)
        attributes = {name: op.attributes[name] for name in op.attributes}
        with ir.InsertionPoint(op), op.location:
            view = ir.Operation.create(
                "builtin.unrealized_conversion_cast", results=[byte_view], operands=[memref]
            ).result
            indices = list(op.operands[at + 1 :])
            if at == 0:  # a load
                loaded = ir.Operation.create(
                    op.name, results=[i8], operands=[view, *indices], attributes=attributes
                ).result
                op.results[0].replace_all_uses_with(arith.TruncIOp(narrow.element_type, loaded).result)
            else:
                byte = arith.ExtUIOp(i8, op.operands[0]).result
                ir.Operation.create(op.name, operands=[byte, view, *indices], attributes=attributes)
        op.erase()


def _is_narrow_access(op, ir) -> bool:
    at = ELEMENT_ACCESSES.get(op.name)
    return at is not None and _is_narrow(op.operands[at].type, ir)


def _is_narrow(memref_type, ir) -> bool:
    memref_type = memref_type.maybe_downcast()
    if not isinstance(memref_type, ir.MemRefType):
        return False
    element = memref_type.element_type.maybe_downcast()
    return isinstance(element, ir.IntegerType) and element.width < 8
