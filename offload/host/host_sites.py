"""The MLIR locations of host GPU operations, for the emulator sanitizer's host-side reports (compile --emulate
--sanitize; docs/emulator.md): double frees, host copies past a buffer or memref, leaks, each named by the line
of its gpu.alloc / gpu.dealloc / gpu.memcpy / gpu.memset.

  tag_host_operations   (MLIR, before gpu-to-llvm) puts `call @__mlir_offload_host_site(index, destination
                        bytes, source bytes)` before each such op: the index of its location in a table, and
                        the byte sizes of its memrefs (UNKNOWN_BYTES where not known)
  define_site_function  (llvmlite) defines that function: the table of sites, each {location, null} as the
                        sanitizer's struct san_site, handed to the runtime's __emu_san_host_op (sanitizer.c),
                        declared weak: a bundle linked for a GPU calls nothing
"""

from __future__ import annotations

import os
from dataclasses import replace

SITE_FUNCTION = "__mlir_offload_host_site"
RUNTIME_HOOK = "__emu_san_host_op"
TAGGED_OPS = ("gpu.alloc", "gpu.dealloc", "gpu.memcpy", "gpu.memset")
UNKNOWN_BYTES = -1  # all ones as the runtime's uint64_t: no memref size to check against


def tag_host_operations(host, path: str) -> list[str]:
    """Tag each host GPU memory op of `host` (a module, changed in place); returns the table of locations."""
    import mlir.ir as ir
    from mlir.dialects import arith, func

    from offload.mlir.frontend import location_of

    found = []

    def visit(op):
        if op.name in TAGGED_OPS:
            found.append(op)
        return ir.WalkResult.ADVANCE

    host.walk(visit, ir.WalkOrder.PRE_ORDER)
    if not found:
        return []
    i32, i64 = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(64)
    with ir.InsertionPoint.at_block_begin(host.regions[0].blocks[0]), ir.Location.unknown():
        func.FuncOp(SITE_FUNCTION, ir.FunctionType.get([i32, i64, i64], []), visibility="private")
    sites: dict[str, int] = {}
    for op in found:
        where = location_of(op.location, path)
        site = str(replace(where, file=os.path.basename(where.file)))  # as device lines name it (no folder)
        index = sites.setdefault(site, len(sites))
        memrefs = _memref_operands(op)
        with ir.InsertionPoint(op), op.location:
            destination = _byte_size(memrefs.get("dst"), i64)
            source = _byte_size(memrefs.get("src"), i64)
            number = arith.ConstantOp(i32, index).result
            func.CallOp([], ir.FlatSymbolRefAttr.get(SITE_FUNCTION), [number, destination, source])
    return list(sites)


def _memref_operands(op) -> dict:
    """gpu.memcpy's dst and src, gpu.memset's dst (their memrefs)."""
    name = op.name
    operands = [value for value in op.operands if _is_memref(value)]
    if name == "gpu.memcpy" and len(operands) == 2:
        return {"dst": operands[0], "src": operands[1]}
    if name == "gpu.memset" and operands:
        return {"dst": operands[0]}
    return {}


def _is_memref(value) -> bool:
    import mlir.ir as ir

    return isinstance(value.type, ir.MemRefType)


def _byte_size(value, i64):
    """The bytes a memref with the identity layout spans (its element count times the element's bytes), as
    an i64 value; UNKNOWN_BYTES for another layout or an element type of no fixed byte size."""
    import mlir.ir as ir
    from mlir.dialects import arith, memref

    unknown = arith.ConstantOp(i64, UNKNOWN_BYTES).result
    if value is None:
        return unknown
    memref_type = ir.MemRefType(value.type)
    element = memref_type.element_type
    if isinstance(element, ir.IndexType):
        element_bytes = 8
    elif isinstance(element, (ir.IntegerType, ir.FloatType)):
        element_bytes = (element.width + 7) // 8
    else:
        return unknown
    if memref_type.affine_map != ir.AffineMap.get_identity(memref_type.rank):
        return unknown
    size = arith.ConstantOp(i64, element_bytes).result
    for axis, extent in enumerate(memref_type.shape):
        if memref_type.is_dynamic_dim(axis):
            dim = memref.DimOp(value, arith.ConstantOp(ir.IndexType.get(), axis).result).result
            extent_value = arith.IndexCastOp(i64, dim).result
        else:
            extent_value = arith.ConstantOp(i64, extent).result
        size = arith.MulIOp(size, extent_value).result
    return size


def define_site_function(emitter, sites: list[str]) -> None:
    """`void __mlir_offload_host_site(i32 index, i64 destination bytes, i64 source bytes)`: the runtime's
    __emu_san_host_op(&sites[index], destination bytes, source bytes), if the runtime has it."""
    e = emitter
    ir = e.ir
    site_type = ir.LiteralStructType([e.ptr, e.ptr])
    records = [ir.Constant(site_type, [e.cstring(site), ir.Constant(e.ptr, None)]) for site in sites]
    table = ir.GlobalVariable(e.module, ir.ArrayType(site_type, len(records)), "__mlir_offload_host_sites")
    table.linkage = "private"
    table.global_constant = True
    table.initializer = ir.Constant(table.value_type, records)
    hook = e.declare(RUNTIME_HOOK, e.void, [e.ptr, e.i64, e.i64])
    hook.linkage = "extern_weak"
    fn = e.declare(SITE_FUNCTION, e.void, [e.i32, e.i64, e.i64])
    index, destination, source = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    call = fn.append_basic_block("call")
    done = fn.append_basic_block("done")
    b.cbranch(b.icmp_unsigned("!=", hook, ir.Constant(e.ptr, None)), call, done)
    b.position_at_end(call)
    site = b.gep(table, [ir.Constant(e.i32, 0), index], inbounds=True)
    b.call(hook, [site, destination, source])
    b.branch(done)
    b.position_at_end(done)
    b.ret_void()
