"""MLIR 22's gaps in the WMMA path, worked around before its lowering.

- Its NVVM lowering of `gpu.subgroup_mma_elementwise` aborts on `negatef` and `subf` (UNREACHABLE in
  WmmaOpsToNvvm.cpp): -x becomes x * -1 and a - b becomes a + b * -1 on the fragment, the same IEEE
  results (signed zeros included: -1 * 0 is -0, and a - b is defined as a + (-b)).
- Its `convert-vector-to-gpu` leaves a transposed 2-D `vector.transfer_write` (permutation (d1, d0)) as
  vector ops, which no GPU lowering takes: around a user pipeline that runs that pass, such a write is
  written untransposed, under a marking location, and the `gpu.subgroup_mma_store_matrix` it becomes is
  given `transpose` (a column-major WMMA store); one the pass did not convert gets its permutation back."""

from __future__ import annotations

from offload.mlir.walk import ops_where

# The name of the location wrapped around a transposed transfer_write while convert-vector-to-gpu runs.
TRANSPOSED_MARK = "mlir-offload.transposed-store"
VECTOR_TO_GPU = "convert-vector-to-gpu"


def rewrite_unlowered_elementwise(device, ir) -> None:
    """Each `negatef`/`subf` gpu.subgroup_mma_elementwise rewritten with mulf by -1 and addf."""
    found = ops_where(
        device.operation, lambda op: op.name == "gpu.subgroup_mma_elementwise" and _kind(op) in ("negatef", "subf"), ir
    )
    for op in found:
        matrix = op.results[0].type
        element = ir.Type.parse(str(matrix).split("x")[-1].split(",")[0])
        with ir.InsertionPoint(op), op.location:
            minus_one = ir.Operation.create(
                "arith.constant", results=[element], attributes={"value": ir.FloatAttr.get(element, -1.0)}
            ).result
            ones = ir.Operation.create("gpu.subgroup_mma_constant_matrix", results=[matrix], operands=[minus_one])
            negated = _elementwise("mulf", [op.operands[-1], ones.result], matrix, ir)
            result = negated if _kind(op) == "negatef" else _elementwise("addf", [op.operands[0], negated], matrix, ir)
        op.results[0].replace_all_uses_with(result)
        op.erase()


def _kind(op) -> str:
    return str(op.attributes["opType"]).split()[-1].rstrip(">")


def _elementwise(kind: str, operands: list, matrix, ir):
    return ir.Operation.create(
        "gpu.subgroup_mma_elementwise",
        results=[matrix],
        operands=operands,
        attributes={"opType": ir.Attribute.parse(f"#gpu<mma_element_wise {kind}>")},
    ).result


def runs_vector_to_gpu(pipeline: str) -> bool:
    return VECTOR_TO_GPU in pipeline


def mark_transposed_writes(module, ir) -> None:
    """Before convert-vector-to-gpu: transposed 2-D transfer_writes written untransposed, marked."""
    transposed = ir.AffineMap.get_permutation([1, 0])

    def visit(op):
        if op.name == "vector.transfer_write" and "permutation_map" in op.attributes:
            if ir.AffineMapAttr(op.attributes["permutation_map"]).value == transposed:
                op.attributes["permutation_map"] = ir.AffineMapAttr.get(ir.AffineMap.get_identity(2))
                op.location = ir.Location.name(TRANSPOSED_MARK, op.location)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)


def finish_transposed_writes(module, ir) -> None:
    """After it: the marked stores made column-major, marked writes left as vector ops transposed again."""

    def visit(op):
        location = op.location
        if location.is_a_name() and location.name_str == TRANSPOSED_MARK:
            if op.name == "gpu.subgroup_mma_store_matrix":
                op.attributes["transpose"] = ir.UnitAttr.get()
            elif op.name == "vector.transfer_write":
                op.attributes["permutation_map"] = ir.AffineMapAttr.get(ir.AffineMap.get_permutation([1, 0]))
            op.location = location.child_loc
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
