"""gpu.subgroup_mma_* for gfx11 (wave32) as amdgpu.wmma. MLIR 22 lowers the gpu dialect's matrix ops to
NVVM only ("failed to legalize" on ROCDL), so for gfx11 mlir-offload rewrites them before the device
lowering: each lane loads and stores its fragments in the layout the RDNA3 ISA gives for v_wmma (lane l:
row l % 16 of A and column l % 16 of B, K along the vector; element v of the accumulator: row 2v + l / 16,
column l % 16, for f16 in the low or, with the `opSelect` unit attribute, the high half of 32-bit word v)
and the multiply becomes amdgpu.wmma, which the ROCDL conversion turns into llvm.amdgcn.wmma.*.
Straight-line uses only: a matrix carried through a loop, a block or a call is one located error."""

from __future__ import annotations

from dataclasses import dataclass

from offload.errors import OffloadError
from offload.mlir.frontend import location_of
from offload.mlir.walk import ops_where

MMA_OPS = (
    "gpu.subgroup_mma_load_matrix",
    "gpu.subgroup_mma_store_matrix",
    "gpu.subgroup_mma_compute",
    "gpu.subgroup_mma_constant_matrix",
    "gpu.subgroup_mma_elementwise",
)
SIZE = 16  # gfx11's only shape: 16x16x16


@dataclass(frozen=True)
class Fragment:
    """One !gpu.mma_matrix type as gfx11 holds it in a lane."""

    matrix_type: str  # the gpu dialect's type
    role: str  # "A" (row l % 16), "B" (column l % 16), "C" (rows 2v + l / 16)
    element: str
    lanes_values: int  # the vector's length
    words: bool  # C: a 16-bit element sits in half `opSelect` of 32-bit word v (element 2v + opSelect)


FRAGMENTS = (
    Fragment('!gpu.mma_matrix<16x16xf16, "AOp">', "A", "f16", 16, False),
    Fragment('!gpu.mma_matrix<16x16xf16, "BOp">', "B", "f16", 16, False),
    Fragment('!gpu.mma_matrix<16x16xf32, "COp">', "C", "f32", 8, False),
    Fragment('!gpu.mma_matrix<16x16xf16, "COp">', "C", "f16", 16, True),
)

# gpu.subgroup_mma_elementwise kinds and the arith ops applying them to a whole fragment.
ELEMENTWISE = {
    "addf": "arith.addf",
    "mulf": "arith.mulf",
    "subf": "arith.subf",
    "maxf": "arith.maximumf",
    "minf": "arith.minimumf",
    "divf": "arith.divf",
    "negatef": "arith.negf",
}


def lowers_subgroup_mma(arch: str, wavefront_size: int) -> bool:
    """Whether this rewrite applies: gfx11 in wave32 (wave64 lays the accumulator out differently)."""
    return arch.startswith("gfx11") and wavefront_size == 32


def lower_subgroup_mma_to_wmma(device, path: str, ir) -> None:
    """Every gpu.subgroup_mma_* op in `device` (gpu.modules for a gfx11 target) rewritten as above."""
    found = ops_where(device.operation, lambda op: op.name in MMA_OPS, ir)
    if not found:
        return
    fragments = {ir.Type.parse(f.matrix_type): f for f in FRAGMENTS}
    for op in found:
        for value in [*op.results]:
            _check_straight_line(value, op, path)
    # The matrix type each op makes (or stores), read before any matrix is replaced by a vector.
    matrix_types = [
        (op.operands[0] if op.name == "gpu.subgroup_mma_store_matrix" else op.results[0]).type for op in found
    ]
    for op, matrix_type in zip(found, matrix_types, strict=True):  # pre-order: producers before users
        with ir.InsertionPoint(op), op.location:
            _Rewrite(op, fragments, path, ir).run(matrix_type)
        op.erase()


def _check_straight_line(value, op, path: str) -> None:
    for use in value.uses:
        if use.owner.name not in MMA_OPS:
            raise OffloadError(
                f"gpu.subgroup_mma matrix used by '{use.owner.name}': on gfx11 mlir-offload lowers "
                "matrices used by gpu.subgroup_mma_* ops only (no loops, blocks or calls carrying them)",
                location_of(op.location, path),
            )


class _Rewrite:
    def __init__(self, op, fragments, path: str, ir):
        from mlir.dialects import arith, gpu, memref, vector

        self.op, self.fragments, self.path, self.ir = op, fragments, path, ir
        self.arith, self.gpu, self.memref, self.vector = arith, gpu, memref, vector
        self.index = ir.IndexType.get()

    def fail(self, why: str):
        raise OffloadError(f"'{self.op.name}' on gfx11: {why}", location_of(self.op.location, self.path))

    def vector_type(self, fragment: Fragment):
        return self.ir.VectorType.get([fragment.lanes_values], self.ir.Type.parse(fragment.element))

    def constant(self, n: int):
        return self.arith.ConstantOp(self.index, n).result

    def add(self, a, b):
        return self.arith.AddIOp(a, b).result

    def lane(self):
        """(row or column in A/B/C: lane % 16, half of the wavefront: lane / 16)."""
        lane = self.ir.Operation.create("gpu.lane_id", results=[self.index]).result
        sixteen = self.constant(SIZE)
        return self.arith.RemUIOp(lane, sixteen).result, self.arith.DivUIOp(lane, sixteen).result

    def flag(self, name: str) -> bool:
        return name in self.op.attributes

    def positions(self, fragment: Fragment, opselect: bool):
        """(vector element, row, column) of each value the lane holds; row and column relative to the matrix."""
        column, half = self.lane()
        if fragment.role == "A":
            return [(e, column, self.constant(e)) for e in range(SIZE)]
        if fragment.role == "B":
            return [(e, self.constant(e), column) for e in range(SIZE)]
        return [
            (2 * v + int(opselect) if fragment.words else v, self.add(self.constant(2 * v), half), column)
            for v in range(8)
        ]

    def element_indices(self, memref_value, row, column, transpose: bool):
        """memref indices of the matrix element (row, column) at the op's [i, j] with its leadDimension:
        the element leadDimension * row + column elements past [i, j], as the NVVM lowering addresses it."""
        indices = list(self.op.operands[1:] if self.op.name.endswith("load_matrix") else self.op.operands[2:])
        memref_type = self.ir.MemRefType(memref_value.type)
        lead = self.ir.IntegerAttr(self.op.attributes["leadDimension"]).value
        if memref_type.rank != 2 or len(indices) != 2:
            self.fail("only 2-D memrefs are supported")
        strides, _ = memref_type.get_strides_and_offset()
        if memref_type.is_dynamic_stride_or_offset(strides[0]) or strides[1] != 1:
            self.fail("the memref needs a static row stride and unit columns")
        if transpose:
            row, column = column, row
        if strides[0] == lead:
            return [self.add(indices[0], row), self.add(indices[1], column)]
        row_stride = self.constant(strides[0])
        start = self.add(self.arith.MulIOp(indices[0], row_stride).result, indices[1])
        linear = self.add(start, self.add(self.arith.MulIOp(row, self.constant(lead)).result, column))
        return [self.arith.DivUIOp(linear, row_stride).result, self.arith.RemUIOp(linear, row_stride).result]

    def run(self, matrix_type) -> None:
        fragment = self.fragments.get(matrix_type)
        if fragment is None:
            self.fail(f"{matrix_type} is not a gfx11 WMMA operand (f16 A and B, f16 or f32 C, 16x16)")
        rewrites = {
            "gpu.subgroup_mma_load_matrix": self.subgroup_mma_load_matrix,
            "gpu.subgroup_mma_store_matrix": self.subgroup_mma_store_matrix,
            "gpu.subgroup_mma_compute": self.subgroup_mma_compute,
            "gpu.subgroup_mma_constant_matrix": self.subgroup_mma_constant_matrix,
            "gpu.subgroup_mma_elementwise": self.subgroup_mma_elementwise,
        }
        rewrites[self.op.name](fragment)

    def subgroup_mma_load_matrix(self, fragment: Fragment) -> None:
        source = self.op.operands[0]
        vector_type = self.vector_type(fragment)
        element_type = self.ir.Type.parse(fragment.element)
        zero = self.arith.ConstantOp(element_type, 0.0).result
        values = [zero] * fragment.lanes_values
        for at, row, column in self.positions(fragment, self.flag("opSelect")):
            indices = self.element_indices(source, row, column, self.flag("transpose"))
            values[at] = self.memref.LoadOp(source, indices).result
        loaded = self.vector.FromElementsOp(vector_type, values).result
        self.op.results[0].replace_all_uses_with(loaded)

    def subgroup_mma_store_matrix(self, fragment: Fragment) -> None:
        value, target = self.op.operands[0], self.op.operands[1]
        for at, row, column in self.positions(fragment, self.flag("opSelect")):
            element = self.vector.ExtractOp(value, [], [at]).result
            self.memref.StoreOp(element, target, self.element_indices(target, row, column, self.flag("transpose")))

    def subgroup_mma_compute(self, fragment: Fragment) -> None:
        if self.flag("a_transpose") or self.flag("b_transpose"):
            self.fail("a_transpose and b_transpose are not supported (load the operand with transpose instead)")
        i32 = self.ir.IntegerType.get_signless(32)
        attributes = {
            "m": self.ir.IntegerAttr.get(i32, SIZE),
            "n": self.ir.IntegerAttr.get(i32, SIZE),
            "k": self.ir.IntegerAttr.get(i32, SIZE),
            "subwordOffset": self.ir.IntegerAttr.get(i32, int(self.flag("opSelect"))),
        }
        product = self.ir.Operation.create(
            "amdgpu.wmma", results=[self.vector_type(fragment)], operands=list(self.op.operands), attributes=attributes
        ).result
        self.op.results[0].replace_all_uses_with(product)

    def subgroup_mma_constant_matrix(self, fragment: Fragment) -> None:
        splat = self.vector.BroadcastOp(self.vector_type(fragment), self.op.operands[0]).result
        self.op.results[0].replace_all_uses_with(splat)

    def subgroup_mma_elementwise(self, fragment: Fragment) -> None:
        kind = str(self.op.attributes["opType"]).split()[-1].rstrip(">")
        arith_op = ELEMENTWISE.get(kind)
        if arith_op is None or any(operand.type != self.op.results[0].type for operand in self.op.operands):
            self.fail(f"elementwise {kind} is not supported (supported: {', '.join(ELEMENTWISE)} on one type)")
        result = self.ir.Operation.create(
            arith_op, results=[self.vector_type(fragment)], operands=list(self.op.operands)
        ).result
        self.op.results[0].replace_all_uses_with(result)
