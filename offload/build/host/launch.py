"""Per-kernel host stubs, as clang builds them for `kernel<<<grid, block, shmem, stream>>>(args...)`.

A stub takes the launch configuration (grid x/y/z, block x/y/z as i64, dynamic shared bytes as i32, the
stream) followed by the kernel's arguments, packs the arguments into a `void*[]` of pointers to each one,
and calls cudaLaunchKernel/hipLaunchKernel with the kernel handle and each dim3 coerced as clang does
for the host triple (its record's dim3_params: x86-64 SysV `i64 x | y << 32, i32 z`; AAPCS64 one
`[2 x i64] [x | y << 32, z]`). The handle is the stub itself for CUDA; for HIP it is a separate constant
global that points to the stub (clang's `@kernel = constant ptr @stub`). A dimension that does not fit
in 32 bits is reported on stderr and exits 1 instead of being truncated.
"""

from __future__ import annotations

from offload.build.host.lower import STUB_CONFIG_PARAMS, stub_name
from offload.build.host.runtime import EXIT_STATUS_ON_RUNTIME_ERROR, RuntimeEmitter


def hip_handle_name(kernel: str) -> str:
    return f"__hip_kernel_handle.{kernel}"


def define_stub(emitter: RuntimeEmitter, kernel: str, arg_types) -> object:
    """Define the stub of `kernel`; returns the kernel handle (the value an offload entry points to)."""
    ir = emitter.ir
    e = emitter
    config_types = [e.i64] * 6 + [e.i32, e.ptr]
    fn = e.declare(stub_name(kernel), e.void, config_types + list(arg_types))
    for arg, name in zip(fn.args, STUB_CONFIG_PARAMS):
        arg.name = name
    handle = kernel_handle(e, kernel, fn)
    entry = fn.append_basic_block("entry")
    b = ir.IRBuilder(entry)
    kernel_args = fn.args[len(config_types):]
    # void* args[] = {&a0, &a1, ...}: each argument in its own stack slot, as clang's stub does.
    pointers = b.alloca(ir.ArrayType(e.ptr, max(1, len(kernel_args))), name="kernel_args")
    for position, value in enumerate(kernel_args):
        slot = b.alloca(value.type)
        b.store(value, slot)
        b.store(slot, b.gep(pointers, [ir.Constant(e.i32, 0), ir.Constant(e.i32, position)], inbounds=True))
    grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_bytes, stream = fn.args[:len(config_types)]
    too_large = None
    for dim in (grid_x, grid_y, grid_z, block_x, block_y, block_z):
        over = b.icmp_unsigned(">", dim, ir.Constant(e.i64, 0xFFFFFFFF))
        too_large = over if too_large is None else b.or_(too_large, over)
    launch_block = fn.append_basic_block("launch")
    refuse_block = fn.append_basic_block("dimension_too_large")
    b.cbranch(too_large, refuse_block, launch_block)
    b.position_at_end(refuse_block)
    dprintf = e.declare("dprintf", e.i32, [e.i32, e.ptr], var_arg=True)
    b.call(dprintf, [ir.Constant(e.i32, 2),
                     e.cstring(f"{e.runtime.api['LaunchKernel']}: launch dimension of kernel '{kernel}' "
                               "does not fit in 32 bits\n")])
    b.call(e.declare("exit", e.void, [e.i32]), [ir.Constant(e.i32, EXIT_STATUS_ON_RUNTIME_ERROR)])
    b.unreachable()
    b.position_at_end(launch_block)
    grid = dim3_arguments(b, e, grid_x, grid_y, grid_z)
    block = dim3_arguments(b, e, block_x, block_y, block_z)
    e.checked_call(b, "LaunchKernel", [handle, *grid, *block, pointers, b.zext(shared_bytes, e.i64), stream])
    b.ret_void()
    return handle


def kernel_handle(emitter: RuntimeEmitter, kernel: str, stub):
    """CUDA: the stub. HIP: `@handle = constant ptr @stub` (hipLaunchKernel and the registration use it)."""
    if not emitter.runtime.separate_kernel_handle:
        return stub
    ir = emitter.ir
    handle = ir.GlobalVariable(emitter.module, emitter.ptr, hip_handle_name(kernel))
    handle.global_constant = True
    handle.initializer = stub
    handle.align = 8
    return handle


def dim3_arguments(b, e, x, y, z) -> list:
    """dim3 {x, y, z} (i64 values that fit in 32 bits) as the host passes it: its two eightbytes
    (x | y << 32, z) fill the host record's dim3_params in order, either as scalars (x86-64: i64, i32)
    or as the elements of one array (aarch64: [2 x i64])."""
    ir = e.ir
    words = [b.or_(b.and_(x, ir.Constant(e.i64, 0xFFFFFFFF)), b.shl(y, ir.Constant(e.i64, 32))), z]
    types = e.dim3_types()
    if len(types) == 1 and isinstance(types[0], ir.ArrayType):
        array_type = types[0]
        value = ir.Constant(array_type, ir.Undefined)
        for index, word in enumerate(words):
            value = b.insert_value(value, _fit(b, word, array_type.element), index)
        return [value]
    return [_fit(b, word, t) for word, t in zip(words, types, strict=True)]


def _fit(b, value, int_type):
    width = value.type.width
    if int_type.width == width:
        return value
    return b.trunc(value, int_type) if int_type.width < width else b.zext(value, int_type)
