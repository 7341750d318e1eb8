"""A small DSL on mlir-offload's Python API: `elementwise(name, f)` turns a Python function of one f32
value into a GPU kernel applying it to every element of a vector, plus a host `main` that runs it on
1024 elements; the module is built with the MLIR Python bindings in the DSL's own context, then compiled
and linked with offload.api.  Usage: python3 map_dsl.py OUT_DIR [ARCH]"""

from __future__ import annotations

import os
import sys

import mlir.ir as ir
from mlir.dialects import arith, func, gpu, memref, scf

from offload import api


class F32:
    """An f32 SSA value with Python arithmetic, so a DSL user writes `x * 3.0 + 1.0`."""

    def __init__(self, value):
        self.value = value

    def _lift(self, other):
        return other.value if isinstance(other, F32) else arith.constant(ir.F32Type.get(), float(other))

    def __add__(self, other):
        return F32(arith.addf(self.value, self._lift(other)))

    def __mul__(self, other):
        return F32(arith.mulf(self.value, self._lift(other)))

    __radd__, __rmul__ = __add__, __mul__


def elementwise(name: str, body, size: int = 1024, threads: int = 256) -> ir.Module:
    """module { gpu.module @<name>_kernels { gpu.func @<name>(x, y, n) kernel }  func.func @main }"""
    f32, index = ir.F32Type.get(), ir.IndexType.get()
    vector = ir.MemRefType.get([ir.ShapedType.get_dynamic_size()], f32)
    module = ir.Module.create()
    module.operation.attributes["gpu.container_module"] = ir.UnitAttr.get()
    with ir.InsertionPoint(module.body):
        kernels = gpu.GPUModuleOp(f"{name}_kernels")
        kernels.regions[0].blocks.append()
        with ir.InsertionPoint(kernels.regions[0].blocks[0]):
            kernel = gpu.GPUFuncOp(ir.FunctionType.get([vector, vector, index], []), sym_name=name, kernel=True)
            entry = kernel.regions[0].blocks.append(vector, vector, index)
            with ir.InsertionPoint(entry):
                x, y, n = entry.arguments
                i = gpu.global_id(gpu.Dimension.x)
                inside = scf.IfOp(arith.cmpi(arith.CmpIPredicate.ult, i, n))
                with ir.InsertionPoint(inside.then_block):
                    memref.store(body(F32(memref.load(x, [i]))).value, y, [i])
                    scf.yield_([])
                gpu.return_([])

        @func.FuncOp.from_py_func(name="main")
        def main():
            def const(v):
                return arith.constant(index, v)

            n = const(size)
            host = memref.alloc(vector, [n], [])
            loop = scf.ForOp(const(0), n, const(1))
            with ir.InsertionPoint(loop.body):
                value = arith.sitofp(f32, arith.index_cast(ir.IntegerType.get_signless(32), loop.induction_variable))
                memref.store(value, host, [loop.induction_variable])
                scf.yield_([])
            x, y = (gpu.alloc(vector, None, [], [n], []) for _ in range(2))
            gpu.memcpy(None, [], x, host)
            gpu.LaunchFuncOp(
                [f"{name}_kernels", name],
                (const(size // threads), const(1), const(1)),
                (const(threads), const(1), const(1)),
                [x, y, n],
            )
            gpu.memcpy(None, [], host, y)
            for buffer in (x, y):
                gpu.dealloc(None, [], buffer)
            memref.dealloc(host)
            return arith.constant(ir.IntegerType.get_signless(32), 0)

    return module


def main(out: str, arch: str) -> None:
    os.makedirs(out, exist_ok=True)  # the output folder, as a build tool makes it
    with ir.Context(), ir.Location.unknown():
        module = elementwise("axpb", lambda v: v * 3.0 + 1.0)
        bundle = api.compile_module(module, offload_arch=arch, name="axpb")
    path = bundle.write(os.path.join(out, f"axpb.offload{bundle.suffix}"))
    api.link([path], os.path.join(out, "axpb"))
    print(os.path.join(out, "axpb"))


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: python3 map_dsl.py OUT_DIR [ARCH]")
    try:
        main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "sm_80")
    except (api.OffloadError, OSError) as error:  # one line, as the command line reports it
        sys.exit(error.render() if isinstance(error, api.OffloadError) else f"map_dsl.py: error: {error}")
