"""Host launch code, as clang builds it for `kernel<<<grid, block, shmem, stream>>>(args...)`, shared by the kernels.

The program's launches call `__mlir_offload_pack.N(entry, grid x/y/z, block x/y/z as i64, dynamic shared bytes
as i32, stream, args...)` (lower.py): one packing function per distinct kernel argument list, given the
kernel's offload entry (`.offloading.entry.K`, entries.py), which holds the kernel handle and name. Each kernel
has one function of its own, clang's stub (`__device_stub__K`, the kernel's arguments only): what a .cu file's
`K<<<...>>>(args)` calls after pushing the configuration; it pops it and launches; it is the kernel handle.
A stub is a single call (optnone: the host compile at link gives it the quick -O0 code generator), the packing
is one function per argument list, the launch one function for all: the host compile at link pays for the
launch code once, not once per kernel. Packing puts the arguments into a `void*[]` of pointers to each one;
the launch function reads the handle and name from the entry and calls cudaLaunchKernel/hipLaunchKernel with
each dim3 coerced as clang does for the host triple (its record's dim3_params: x86-64 SysV
`i64 x | y << 32, i32 z`; AAPCS64 one `[2 x i64] [x | y << 32, z]`). The handle is clang's stub for CUDA; for
HIP it is a separate constant global that points to it (clang's `@kernel = constant ptr @stub`). A dimension
that does not fit in 32 bits is reported on stderr and exits 1 instead of being truncated. A
`clusters in (...)` launch has its own stub (CUDA only) that calls cudaLaunchKernelExC with the launch config
passed by pointer.
"""

from __future__ import annotations

from offload.errors import OffloadError
from offload.formats.vendors import vendor_for
from offload.host.entries import load_field
from offload.host.lower import STUB_CONFIG_PARAMS, clang_stub_name, cluster_stub_name, packing_name
from offload.host.runtime import EXIT_STATUS_ON_RUNTIME_ERROR, RuntimeEmitter


def hip_handle_name(kernel: str) -> str:
    return f"__hip_kernel_handle.{kernel}"


def declare_stub(emitter: RuntimeEmitter, kernel: str, arg_types) -> tuple:
    """`void __device_stub__K(<kernel arguments>)`, clang's stub of an extern "C" kernel, declared: its body
    (define_stub) needs the kernel's offload entry, which needs the kernel handle. Returns (stub, kernel
    handle): CUDA's handle is the stub, HIP's the constant global pointing to it."""
    e = emitter
    fn = e.declare(clang_stub_name(kernel), e.void, list(arg_types))
    # One call: nothing for the optimizer, and -O0 code generation is the cheap part of the host compile.
    fn.attributes.add("noinline")
    fn.attributes.add("optnone")
    return fn, kernel_handle(e, kernel, fn)


def define_stub(emitter: RuntimeEmitter, stub, arg_types, entry) -> None:
    """The body of clang's stub, which a .cu file's `K<<<grid, block, shared, stream>>>(args)` calls after
    pushing the configuration: the popping function of its argument list, given the kernel's offload entry."""
    b = emitter.ir.IRBuilder(stub.append_basic_block("entry"))
    b.call(popping_function(emitter, arg_types), [entry, *stub.args])
    b.ret_void()


LAUNCH_FUNCTION = "__mlir_offload_launch"
POPPING_FUNCTION = "__mlir_offload_pop"


def popping_function(emitter: RuntimeEmitter, arg_types):
    """`void pop.N(ptr entry, <kernel arguments>)`, one per distinct list of kernel argument types (as
    packing_function): pops the configuration a .cu call site pushed (the runtime keeps it per thread, not per
    frame) and packs and launches through packing_function."""
    e = emitter
    key = tuple(str(t) for t in arg_types)
    existing = e.poppers.get(key)
    if existing is not None:
        return existing
    ir = e.ir
    fn = ir.Function(e.module, ir.FunctionType(e.void, [e.ptr, *arg_types]), f"{POPPING_FUNCTION}.{len(e.poppers)}")
    fn.linkage = "internal"
    fn.attributes.add("noinline")
    fn.args[0].name = "kernel_entry"
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    dim3 = ir.ArrayType(e.i32, 3)
    grid, block = b.alloca(dim3, name="grid"), b.alloca(dim3, name="block")
    shared, stream = b.alloca(e.i64, name="shared_bytes"), b.alloca(e.ptr, name="stream")
    b.call(e.api("PopCallConfiguration"), [grid, block, shared, stream])
    dims = [
        b.zext(b.load(b.gep(d, [ir.Constant(e.i32, 0), ir.Constant(e.i32, i)], inbounds=True)), e.i64)
        for d in (grid, block)
        for i in range(3)
    ]
    config = [*dims, b.trunc(b.load(shared), e.i32), b.load(stream)]
    b.call(packing_function(e, arg_types), [fn.args[0], *config, *fn.args[1:]])
    b.ret_void()
    e.poppers[key] = fn
    return fn


def packing_function(emitter: RuntimeEmitter, arg_types):
    """`void __mlir_offload_pack.N(ptr entry, <launch configuration>, <kernel arguments>)`, one per distinct
    list of kernel argument types (numbered in order of first use: the lowered host's launches, which call
    them, come first): packs the arguments into the `void*[]` as clang's stub does and launches through
    launch_function. External here, to define the lowered host's declarations; the annotation makes it
    internal once linked."""
    e = emitter
    key = tuple(str(t) for t in arg_types)
    existing = e.packers.get(key)
    if existing is not None:
        return existing
    ir = e.ir
    config_types = [e.i64] * 6 + [e.i32, e.ptr]
    fn = ir.Function(
        e.module, ir.FunctionType(e.void, [e.ptr, *config_types, *arg_types]), packing_name(len(e.packers))
    )
    fn.attributes.add("noinline")
    for arg, name in zip(fn.args, ("kernel_entry", *STUB_CONFIG_PARAMS), strict=False):
        arg.name = name
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    pointers = _argument_pointers(e, b, fn.args[1 + len(config_types) :])
    b.call(launch_function(e), [*fn.args[: 1 + len(config_types)], pointers])
    b.ret_void()
    e.packers[key] = fn
    return fn


def launch_function(emitter: RuntimeEmitter):
    """`void launch(ptr entry, i64 grid x/y/z, i64 block x/y/z, i32 shared bytes, ptr stream, ptr args)`,
    made once: the kernel handle and name read from the offload entry, the dimension check, the dynamic shared
    memory opt-in and the checked cudaLaunchKernel/hipLaunchKernel of every kernel."""
    e = emitter
    existing = e.module.globals.get(LAUNCH_FUNCTION)
    if existing is not None:
        return existing
    ir = e.ir
    fn = ir.Function(e.module, ir.FunctionType(e.void, [e.ptr] + [e.i64] * 6 + [e.i32, e.ptr, e.ptr]), LAUNCH_FUNCTION)
    fn.linkage = "internal"
    fn.attributes.add("noinline")
    entry = fn.args[0]
    grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_bytes, stream, pointers = fn.args[1:]
    for arg, name in zip(fn.args, ("kernel_entry", *STUB_CONFIG_PARAMS, "kernel_args"), strict=True):
        arg.name = name
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    handle = load_field(b, e.module, e.profile, entry, "address")
    kernel_name = load_field(b, e.module, e.profile, entry, "name")
    _refuse_wide_dimensions(e, b, fn, kernel_name, fn.args[1:7])
    _opt_in_dynamic_shared(e, b, fn, handle, shared_bytes)
    grid = dim3_arguments(b, e, grid_x, grid_y, grid_z)
    block = dim3_arguments(b, e, block_x, block_y, block_z)
    e.checked_call(b, "LaunchKernel", [handle, *grid, *block, pointers, b.zext(shared_bytes, e.i64), stream])
    b.ret_void()
    return fn


# CUDA 13 driver_types.h: cudaLaunchAttributeClusterDimension, cudaLaunchAttributeClusterSchedulingPolicyPreference
# with cudaClusterSchedulingPolicySpread (what upstream's mgpuLaunchClusterKernel asks for), and the
# cudaFuncAttribute values the stubs set.
LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4
LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY = 5
CLUSTER_SCHEDULING_POLICY_SPREAD = 1
FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_MEMORY_SIZE = 8
FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14
PORTABLE_CLUSTER_BLOCKS = 8  # larger clusters (up to 16 on sm_90) need the non-portable opt-in


def _opt_in_dynamic_shared(e: RuntimeEmitter, b, fn, handle, shared_bytes) -> None:
    """Dynamic shared memory over the vendor's default limit (CUDA: 48 KiB) is refused at launch unless the
    kernel's maximum was raised first (upstream's mgpuLaunchKernel sets it too): set it to this launch's size."""
    limit = e.runtime.dynamic_shared_opt_in_above
    if limit is None:
        return
    ir = e.ir
    raise_block = fn.append_basic_block("raise_shared_limit")
    launch_block = fn.append_basic_block("shared_limit_ok")
    b.cbranch(b.icmp_unsigned(">", shared_bytes, ir.Constant(e.i32, limit)), raise_block, launch_block)
    b.position_at_end(raise_block)
    e.checked_call(
        b, "FuncSetAttribute", [handle, ir.Constant(e.i32, FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_MEMORY_SIZE), shared_bytes]
    )
    b.branch(launch_block)
    b.position_at_end(launch_block)


def define_cluster_stub(emitter: RuntimeEmitter, kernel: str, arg_types, handle, location) -> None:
    """The stub of a `clusters in (...)` launch of `kernel`: the cluster x/y/z (i64) before the usual launch
    configuration, launched by cudaLaunchKernelExC with a cudaLaunchConfig_t holding the cluster-dimension and
    the spread scheduling-policy attributes (as upstream's mgpuLaunchClusterKernel); a cluster of more than 8
    blocks first allows non-portable sizes. The config is passed by pointer: no dim3 coercion."""
    e = emitter
    ir = e.ir
    if not vendor_for(e.runtime.kind).cluster_launch:
        raise OffloadError(
            f"launch of '{kernel}' with clusters: thread-block clusters are a CUDA (sm_90) feature; "
            f"the {e.runtime.kind} runtime has no cluster launch",
            location,
        )
    config_types = [e.i64] * 9 + [e.i32, e.ptr]
    fn = e.declare(cluster_stub_name(kernel), e.void, config_types + list(arg_types))
    for arg, name in zip(fn.args, ("cluster_x", "cluster_y", "cluster_z") + STUB_CONFIG_PARAMS, strict=False):
        arg.name = name
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    pointers = _argument_pointers(e, b, fn.args[len(config_types) :])
    dims = fn.args[:9]
    shared_bytes, stream = fn.args[9], fn.args[10]
    _refuse_wide_dimensions(e, b, fn, e.cstring(kernel), dims)
    _opt_in_dynamic_shared(e, b, fn, handle, shared_bytes)
    cluster_blocks = b.mul(b.mul(dims[0], dims[1]), dims[2])
    non_portable = fn.append_basic_block("non_portable_cluster")
    configure = fn.append_basic_block("configure")
    above_portable = b.icmp_unsigned(">", cluster_blocks, ir.Constant(e.i64, PORTABLE_CLUSTER_BLOCKS))
    b.cbranch(above_portable, non_portable, configure)
    b.position_at_end(non_portable)
    e.checked_call(
        b,
        "FuncSetAttribute",
        [handle, ir.Constant(e.i32, FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED), ir.Constant(e.i32, 1)],
    )
    b.branch(configure)
    b.position_at_end(configure)
    dim3 = ir.ArrayType(e.i32, 3)
    # cudaLaunchAttribute: {i32 id, 4 bytes padding, 64-byte value union}; cudaLaunchConfig_t:
    # {dim3 grid, dim3 block, size_t shared bytes, stream, attribute*, unsigned count}.
    attribute_type = ir.LiteralStructType([e.i32, ir.ArrayType(e.i8, 4), ir.ArrayType(e.i32, 16)])
    config_type = ir.LiteralStructType([dim3, dim3, e.i64, e.ptr, e.ptr, e.i32])
    attributes = b.alloca(ir.ArrayType(attribute_type, 2), name="launch_attributes")
    attributes.align = 8
    b.store(ir.Constant(attributes.allocated_type, None), attributes)
    b.store(ir.Constant(e.i32, LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION), _field(b, e, attributes, 0, 0))
    for position, dim in enumerate(dims[:3]):
        b.store(b.trunc(dim, e.i32), _field(b, e, attributes, 0, 2, position))
    b.store(ir.Constant(e.i32, LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY), _field(b, e, attributes, 1, 0))
    b.store(ir.Constant(e.i32, CLUSTER_SCHEDULING_POLICY_SPREAD), _field(b, e, attributes, 1, 2, 0))
    config = b.alloca(config_type, name="launch_config")
    config.align = 8
    for position, dim in enumerate(dims[3:9]):
        b.store(b.trunc(dim, e.i32), _field(b, e, config, position // 3, position % 3))
    b.store(b.zext(shared_bytes, e.i64), _field(b, e, config, 2))
    b.store(stream, _field(b, e, config, 3))
    b.store(attributes, _field(b, e, config, 4))
    b.store(ir.Constant(e.i32, 2), _field(b, e, config, 5))
    e.checked_call(b, "LaunchKernelExC", [config, handle, pointers])
    b.ret_void()


def _field(b, e, pointer, *path):
    return b.gep(pointer, [e.ir.Constant(e.i32, 0), *(e.ir.Constant(e.i32, i) for i in path)], inbounds=True)


def _argument_pointers(e: RuntimeEmitter, b, kernel_args):
    """void* args[] = {&a0, &a1, ...}: each argument in its own stack slot, as clang's stub does."""
    ir = e.ir
    pointers = b.alloca(ir.ArrayType(e.ptr, max(1, len(kernel_args))), name="kernel_args")
    for position, value in enumerate(kernel_args):
        slot = b.alloca(value.type)
        b.store(value, slot)
        b.store(slot, b.gep(pointers, [ir.Constant(e.i32, 0), ir.Constant(e.i32, position)], inbounds=True))
    return pointers


def _refuse_wide_dimensions(e: RuntimeEmitter, b, fn, kernel_name, dims) -> None:
    """A launch dimension over 32 bits is reported on stderr (exit 1), naming the kernel (`kernel_name`: a
    pointer to its NUL-terminated name); `b` continues in the launch block."""
    ir = e.ir
    too_large = None
    for dim in dims:
        over = b.icmp_unsigned(">", dim, ir.Constant(e.i64, 0xFFFFFFFF))
        too_large = over if too_large is None else b.or_(too_large, over)
    launch_block = fn.append_basic_block("launch")
    refuse_block = fn.append_basic_block("dimension_too_large")
    b.cbranch(too_large, refuse_block, launch_block)
    b.position_at_end(refuse_block)
    dprintf = e.declare("dprintf", e.i32, [e.i32, e.ptr], var_arg=True)
    b.call(
        dprintf,
        [
            ir.Constant(e.i32, 2),
            e.cstring(f"{e.runtime.api['LaunchKernel']}: launch dimension of kernel '%s' does not fit in 32 bits\n"),
            kernel_name,
        ],
    )
    b.call(e.declare("exit", e.void, [e.i32]), [ir.Constant(e.i32, EXIT_STATUS_ON_RUNTIME_ERROR)])
    b.unreachable()
    b.position_at_end(launch_block)


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
