"""Host GPU operations on the vendor runtime, emitted into the bundle (no libmlir_cuda_runtime).

Upstream `gpu-to-llvm` lowers gpu.alloc/memcpy/memset/wait/... to calls of `mgpu*` functions. This module
defines those functions (llvmlite.ir) on the CUDA runtime or the HIP runtime; the two differ only in the
data of `RUNTIMES`. Every runtime call's status is checked: on failure the program prints
`<api name>: <runtime error string>` on stderr and exits with status 1 (exit, not abort: stdout is
flushed and no core file is left).

Async model (upstream's): an async token is a stream. `gpu.wait async` creates a stream, an op with a
dependency runs on its dependency's stream, a further dependency is an event recorded on that stream
and waited for; `gpu.wait [tokens]` synchronizes and destroys the streams. Synchronous GPU ops are put on
streams by tokens.py, with a wait before the next host operation that may touch memory.
Allocation and free are immediate (cudaMalloc/cudaFree; the frees wait for the device, so freeing after
queued work is safe), copies and sets are queued on the stream.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from offload.errors import OffloadError
from offload.formats.vendors import VENDORS, vendor_for
from offload.host.sparse_runtime import SPARSE_SHIMS, STRUCTURED_SHIMS

CHECK_FUNCTION = "__mlir_offload_check"
EXIT_STATUS_ON_RUNTIME_ERROR = 1


@dataclass(frozen=True)
class Runtime:
    """One vendor runtime: its API names and the enum values the shims pass."""

    kind: str  # offload kind: "cuda" | "hip"
    library: str  # what the executable links: -l<library>
    api: dict = field(default_factory=dict)  # generic name -> runtime function name
    memcpy_default: int = 4  # cudaMemcpyDefault / hipMemcpyDefault (direction from the pointers)
    mem_attach_global: int = 1  # cudaMemAttachGlobal / hipMemAttachGlobal
    host_register_default: int = 0  # cudaHostRegisterDefault / hipHostRegisterDefault
    # CUDA's kernel handle is the host stub; HIP's is a constant global pointing to the stub.
    separate_kernel_handle: bool = False
    dynamic_shared_opt_in_above: int | None = None  # see Vendor.dynamic_shared_opt_in_above


def _api(prefix: str) -> dict:
    names = (
        "Malloc",
        "MallocManaged",
        "Free",
        "MemcpyAsync",
        "MemsetAsync",
        "StreamCreate",
        "StreamDestroy",
        "StreamSynchronize",
        "StreamWaitEvent",
        "EventCreate",
        "EventDestroy",
        "EventRecord",
        "EventSynchronize",
        "HostRegister",
        "HostUnregister",
        "HostGetDevicePointer",
        "SetDevice",
        "LaunchKernel",
        "LaunchKernelExC",
        "FuncSetAttribute",
        "GetDriverEntryPointByVersion",
        "GetErrorString",
    )
    # What clang's stub of a `kernel<<<...>>>` launch calls for the configuration its call site pushed.
    return {**{name: prefix + name for name in names}, "PopCallConfiguration": f"__{prefix}PopCallConfiguration"}


RUNTIMES = {
    kind: Runtime(
        kind=kind,
        library=vendor.link_library,
        api=_api(vendor.api_prefix),
        separate_kernel_handle=vendor.separate_kernel_handle,
        dynamic_shared_opt_in_above=vendor.dynamic_shared_opt_in_above,
    )
    for kind, vendor in VENDORS.items()
}


def runtime_for(offload_kind: str) -> Runtime:
    try:
        return RUNTIMES[offload_kind]
    except KeyError:
        raise OffloadError(f"no host runtime for offload kind '{offload_kind}'") from None


def parse_llvm_type(ir, text: str):
    """llvmlite type of "iN" or "[N x iM]" (the spellings host records use)."""
    text = text.strip()
    if text.startswith("[") and text.endswith("]"):
        count, element = text[1:-1].split(" x ", 1)
        return ir.ArrayType(parse_llvm_type(ir, element), int(count))
    if text.startswith("i") and text[1:].isdigit():
        return ir.IntType(int(text[1:]))
    raise OffloadError(f"internal error: unknown LLVM type '{text}' in a host record")


class RuntimeEmitter:
    """Builds the runtime calls and the mgpu* shims into one llvmlite.ir module."""

    def __init__(self, module, runtime: Runtime, host, profile):
        import llvmlite.ir as ir

        self.ir = ir
        self.module = module
        self.runtime = runtime
        self.host = host  # offload.formats.hosts.HostTriple: its launch ABI shapes LaunchKernel
        self.profile = profile  # the target clang's: the offload entries' layout, where launches read the kernel
        self.i8 = ir.IntType(8)
        self.i16 = ir.IntType(16)
        self.i32 = ir.IntType(32)
        self.i64 = ir.IntType(64)
        self.ptr = ir.PointerType()
        self.void = ir.VoidType()
        self._strings: dict[str, object] = {}
        self.packers: dict[tuple, Any] = {}  # kernel argument types -> launch.packing_function's function
        self.poppers: dict[tuple, object] = {}  # kernel argument types -> launch.popping_function's function

    # -- declarations and constants ---------------------------------------------------------------
    def declare(self, name: str, ret, args, var_arg: bool = False):
        existing = self.module.globals.get(name)
        if existing is not None:
            return existing
        return self.ir.Function(self.module, self.ir.FunctionType(ret, args, var_arg=var_arg), name)

    def api(self, generic: str):
        """Declaration of a runtime function (all return a status, except GetErrorString)."""
        name = self.runtime.api[generic]
        signatures = {
            "Malloc": [self.ptr, self.i64],
            "MallocManaged": [self.ptr, self.i64, self.i32],
            "Free": [self.ptr],
            "MemcpyAsync": [self.ptr, self.ptr, self.i64, self.i32, self.ptr],
            "MemsetAsync": [self.ptr, self.i32, self.i64, self.ptr],
            "StreamCreate": [self.ptr],
            "StreamDestroy": [self.ptr],
            "StreamSynchronize": [self.ptr],
            "StreamWaitEvent": [self.ptr, self.ptr, self.i32],
            "EventCreate": [self.ptr],
            "EventDestroy": [self.ptr],
            "EventRecord": [self.ptr, self.ptr],
            "EventSynchronize": [self.ptr],
            "HostRegister": [self.ptr, self.i64, self.i32],
            "HostUnregister": [self.ptr],
            "HostGetDevicePointer": [self.ptr, self.ptr, self.i32],
            "SetDevice": [self.i32],
            "LaunchKernel": [self.ptr, *self.dim3_types(), *self.dim3_types(), self.ptr, self.i64, self.ptr],
            "LaunchKernelExC": [self.ptr, self.ptr, self.ptr],
            "FuncSetAttribute": [self.ptr, self.i32, self.i32],
            "GetDriverEntryPointByVersion": [self.ptr, self.ptr, self.i32, self.i64, self.ptr],
            "PopCallConfiguration": [self.ptr, self.ptr, self.ptr, self.ptr],
        }
        if generic == "GetErrorString":
            return self.declare(name, self.ptr, [self.i32])
        return self.declare(name, self.i32, signatures[generic])

    def dim3_types(self) -> list:
        """The llvmlite types one dim3 is passed as on this host (its record's dim3_params)."""
        return [parse_llvm_type(self.ir, text) for text in self.host.dim3_params]

    def cstring(self, text: str):
        """A private NUL-terminated constant (one per distinct text)."""
        if text in self._strings:
            return self._strings[text]
        data = bytearray(text.encode() + b"\0")
        const = self.ir.Constant(self.ir.ArrayType(self.i8, len(data)), data)
        var = self.ir.GlobalVariable(self.module, const.type, f".mlir_offload.str.{len(self._strings)}")
        var.linkage = "private"
        var.global_constant = True
        var.unnamed_addr = True
        var.initializer = const
        var.align = 1
        self._strings[text] = var
        return var

    def constant_table(self, name: str, element_type, values):
        """A private constant array `.mlir_offload.<name>` (made once)."""
        full = f".mlir_offload.{name}"
        existing = self.module.globals.get(full)
        if existing is not None:
            return existing
        const = self.ir.Constant(self.ir.ArrayType(element_type, len(values)), list(values))
        var = self.ir.GlobalVariable(self.module, const.type, full)
        var.linkage = "private"
        var.global_constant = True
        var.initializer = const
        return var

    # -- checked calls ----------------------------------------------------------------------------
    def check_function(self):
        """`void check(i32 status, ptr api)`: on a nonzero status print `api: error string`, exit(1)."""
        existing = self.module.globals.get(CHECK_FUNCTION)
        if existing is not None:
            return existing
        ir = self.ir
        fn = ir.Function(self.module, ir.FunctionType(self.void, [self.i32, self.ptr]), CHECK_FUNCTION)
        fn.linkage = "internal"
        status, api_name = fn.args
        entry = fn.append_basic_block("entry")
        failed = fn.append_basic_block("failed")
        done = fn.append_basic_block("done")
        b = ir.IRBuilder(entry)
        b.cbranch(b.icmp_unsigned("!=", status, ir.Constant(self.i32, 0)), failed, done)
        b.position_at_end(failed)
        message = b.call(self.api("GetErrorString"), [status])
        dprintf = self.declare("dprintf", self.i32, [self.i32, self.ptr], var_arg=True)
        b.call(dprintf, [ir.Constant(self.i32, 2), self.cstring("%s: %s\n"), api_name, message])
        b.call(self.declare("exit", self.void, [self.i32]), [ir.Constant(self.i32, EXIT_STATUS_ON_RUNTIME_ERROR)])
        b.unreachable()
        b.position_at_end(done)
        b.ret_void()
        return fn

    def checked_call(self, builder, generic: str, args):
        status = builder.call(self.api(generic), args)
        builder.call(self.check_function(), [status, self.cstring(self.runtime.api[generic])])

    def call_with_out_pointer(self, builder, generic: str, args_after=()):
        """`T x; check(api(&x, ...)); return x` for the create/alloc calls."""
        slot = builder.alloca(self.ptr)
        builder.store(self.ir.Constant(self.ptr, None), slot)
        self.checked_call(builder, generic, [slot, *args_after])
        return builder.load(slot, typ=self.ptr)

    # -- the mgpu* shims ----------------------------------------------------------------------------
    def define_shims(self, names) -> None:
        """Define each mgpu* function the lowered host calls; an unknown one is an error."""
        for name in names:
            emit = SHIMS.get(name)
            if emit is None:
                known = ", ".join(sorted(SHIMS))
                raise OffloadError(
                    f"the host code needs runtime function '{name}', which mlir-offload does "
                    f"not provide (it provides: {known})"
                )
            emit(self)

    def _shim(self, name: str, ret, args):
        fn = self.declare(name, ret, args)
        # External while linking (it must resolve the host module's declaration), internal afterwards.
        block = fn.append_basic_block("entry")
        return fn, self.ir.IRBuilder(block)


def _stream_create(e: RuntimeEmitter):
    fn, b = e._shim("mgpuStreamCreate", e.ptr, [])
    b.ret(e.call_with_out_pointer(b, "StreamCreate"))


def _unary_status(shim: str, generic: str):
    def emit(e: RuntimeEmitter):
        fn, b = e._shim(shim, e.void, [e.ptr])
        e.checked_call(b, generic, [fn.args[0]])
        b.ret_void()

    return emit


def _stream_wait_event(e: RuntimeEmitter):
    fn, b = e._shim("mgpuStreamWaitEvent", e.void, [e.ptr, e.ptr])
    e.checked_call(b, "StreamWaitEvent", [fn.args[0], fn.args[1], e.ir.Constant(e.i32, 0)])
    b.ret_void()


def _event_create(e: RuntimeEmitter):
    fn, b = e._shim("mgpuEventCreate", e.ptr, [])
    b.ret(e.call_with_out_pointer(b, "EventCreate"))


def _event_record(e: RuntimeEmitter):
    fn, b = e._shim("mgpuEventRecord", e.void, [e.ptr, e.ptr])
    e.checked_call(b, "EventRecord", [fn.args[0], fn.args[1]])
    b.ret_void()


def _mem_alloc(e: RuntimeEmitter):
    ir = e.ir
    fn, b = e._shim("mgpuMemAlloc", e.ptr, [e.i64, e.ptr, e.i8])
    size, _stream, host_shared = fn.args
    shared_block = fn.append_basic_block("host_shared")
    device_block = fn.append_basic_block("device")
    b.cbranch(b.icmp_unsigned("!=", host_shared, ir.Constant(e.i8, 0)), shared_block, device_block)
    b.position_at_end(shared_block)
    b.ret(e.call_with_out_pointer(b, "MallocManaged", [size, ir.Constant(e.i32, e.runtime.mem_attach_global)]))
    b.position_at_end(device_block)
    b.ret(e.call_with_out_pointer(b, "Malloc", [size]))


def _mem_free(e: RuntimeEmitter):
    fn, b = e._shim("mgpuMemFree", e.void, [e.ptr, e.ptr])
    e.checked_call(b, "Free", [fn.args[0]])
    b.ret_void()


def _memcpy(e: RuntimeEmitter):
    fn, b = e._shim("mgpuMemcpy", e.void, [e.ptr, e.ptr, e.i64, e.ptr])
    dst, src, size, stream = fn.args
    e.checked_call(b, "MemcpyAsync", [dst, src, size, e.ir.Constant(e.i32, e.runtime.memcpy_default), stream])
    b.ret_void()


def _memset(width_bits: int):
    """mgpuMemsetN(dst, value, count, stream). The runtimes' memset sets bytes: a value whose bytes are
    all equal is one memset; any other pattern is written to a host buffer and copied (then synced,
    so the buffer can be freed)."""

    def emit(e: RuntimeEmitter):
        ir = e.ir
        value_type = ir.IntType(width_bits)
        element_bytes = width_bits // 8
        fn, b = e._shim(f"mgpuMemset{width_bits}", e.void, [e.ptr, value_type, e.i64, e.ptr])
        dst, value, count, stream = fn.args
        size = b.mul(count, ir.Constant(e.i64, element_bytes))
        low_byte = b.and_(value, ir.Constant(value_type, 0xFF))
        splat = b.mul(low_byte, ir.Constant(value_type, int("01" * element_bytes, 16)))
        uniform_block = fn.append_basic_block("uniform")
        pattern_block = fn.append_basic_block("pattern")
        b.cbranch(b.icmp_unsigned("==", splat, value), uniform_block, pattern_block)
        b.position_at_end(uniform_block)
        e.checked_call(b, "MemsetAsync", [dst, b.zext(low_byte, e.i32) if width_bits < 32 else low_byte, size, stream])
        b.ret_void()
        b.position_at_end(pattern_block)
        malloc = e.declare("malloc", e.ptr, [e.i64])
        free = e.declare("free", e.void, [e.ptr])
        buffer = b.call(malloc, [size])
        loop = fn.append_basic_block("fill")
        copy = fn.append_basic_block("copy")
        entry_block = b.block
        b.cbranch(b.icmp_unsigned("==", count, ir.Constant(e.i64, 0)), copy, loop)
        b.position_at_end(loop)
        index = b.phi(e.i64)
        index.add_incoming(ir.Constant(e.i64, 0), entry_block)
        b.store(value, b.gep(buffer, [index], source_etype=value_type))
        following = b.add(index, ir.Constant(e.i64, 1))
        index.add_incoming(following, loop)
        b.cbranch(b.icmp_unsigned("<", following, count), loop, copy)
        b.position_at_end(copy)
        e.checked_call(b, "MemcpyAsync", [dst, buffer, size, ir.Constant(e.i32, e.runtime.memcpy_default), stream])
        e.checked_call(b, "StreamSynchronize", [stream])
        b.call(free, [buffer])
        b.ret_void()

    return emit


def _memref_bytes(e: RuntimeEmitter, b, fn, rank, descriptor, element_bytes):
    """(start pointer, byte size) of a dense memref from its ranked descriptor
    {ptr allocated, ptr aligned, i64 offset, i64 sizes[rank], i64 strides[rank]}."""
    ir = e.ir
    aligned = b.load(b.gep(descriptor, [ir.Constant(e.i64, 1)], source_etype=e.ptr), typ=e.ptr)
    offset = b.load(b.gep(descriptor, [ir.Constant(e.i64, 2)], source_etype=e.i64), typ=e.i64)
    start = b.gep(aligned, [b.mul(offset, element_bytes)], source_etype=e.i8)
    entry_block = b.block
    loop = fn.append_basic_block("sizes")
    done = fn.append_basic_block("sized")
    b.cbranch(b.icmp_signed(">", rank, ir.Constant(e.i64, 0)), loop, done)
    b.position_at_end(loop)
    index = b.phi(e.i64)
    product = b.phi(e.i64)
    index.add_incoming(ir.Constant(e.i64, 0), entry_block)
    product.add_incoming(element_bytes, entry_block)
    extent = b.load(b.gep(descriptor, [b.add(index, ir.Constant(e.i64, 3))], source_etype=e.i64), typ=e.i64)
    next_product = b.mul(product, extent)
    next_index = b.add(index, ir.Constant(e.i64, 1))
    index.add_incoming(next_index, loop)
    product.add_incoming(next_product, loop)
    b.cbranch(b.icmp_signed("<", next_index, rank), loop, done)
    b.position_at_end(done)
    size = b.phi(e.i64)
    size.add_incoming(element_bytes, entry_block)
    size.add_incoming(next_product, loop)
    return start, size


def _host_register(e: RuntimeEmitter):
    fn, b = e._shim("mgpuMemHostRegisterMemRef", e.void, [e.i64, e.ptr, e.i64])
    rank, descriptor, element_bytes = fn.args
    start, size = _memref_bytes(e, b, fn, rank, descriptor, element_bytes)
    e.checked_call(b, "HostRegister", [start, size, e.ir.Constant(e.i32, e.runtime.host_register_default)])
    b.ret_void()


def _host_unregister(e: RuntimeEmitter):
    fn, b = e._shim("mgpuMemHostUnregisterMemRef", e.void, [e.i64, e.ptr, e.i64])
    rank, descriptor, element_bytes = fn.args
    start, _size = _memref_bytes(e, b, fn, rank, descriptor, element_bytes)
    e.checked_call(b, "HostUnregister", [start])
    b.ret_void()


def _device_memref_1d(shim: str):
    """`memref<?xT> mgpuMemGetDeviceMemRef1d*(memref<?xT>)` (upstream's runtime wrappers): the same view of
    host-registered memory through the device's pointer to it."""

    def emit(e: RuntimeEmitter):
        ir = e.ir
        extent = ir.ArrayType(e.i64, 1)
        descriptor = ir.LiteralStructType([e.ptr, e.ptr, e.i64, extent, extent])
        fn, b = e._shim(shim, descriptor, [e.ptr, e.ptr, e.i64, e.i64, e.i64])
        _allocated, aligned, offset, size, stride = fn.args
        device = e.call_with_out_pointer(b, "HostGetDevicePointer", [aligned, ir.Constant(e.i32, 0)])
        value = ir.Constant(descriptor, None)
        for position, member in ((0, device), (1, device), (2, offset)):
            value = b.insert_value(value, member, position)
        value = b.insert_value(value, size, [3, 0])
        b.ret(b.insert_value(value, stride, [4, 0]))

    return emit


def _set_default_device(e: RuntimeEmitter):
    fn, b = e._shim("mgpuSetDefaultDevice", e.void, [e.i32])
    e.checked_call(b, "SetDevice", [fn.args[0]])
    b.ret_void()


# CUtensorMapDataType -> element bytes (cuda.h: UINT8 .. TFLOAT32_FTZ), as upstream's wrapper reads it.
TENSOR_MAP_ELEMENT_BYTES = (1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4)
TENSOR_MAP_MAX_RANK = 5
TENSOR_MAP_BYTES = 128  # sizeof(CUtensorMap), 64-byte aligned
# cuTensorMapEncodeTiled appeared in CUDA 12.0: the driver ABI version asked for.
TENSOR_MAP_DRIVER_VERSION = 12000


def _tensor_map_encode_tiled(e: RuntimeEmitter):
    """mgpuTensorMapEncodeTiledMemref(rank, ranked descriptor*, data type, interleave, swizzle, l2 promotion,
    oob fill, i64 box[rank]) -> device pointer to a CUtensorMap, with upstream's argument order (innermost
    dimension first). cuTensorMapEncodeTiled comes from cudaGetDriverEntryPointByVersion, so the
    executable needs no -lcuda; every failure prints one line and exits 1."""
    if not vendor_for(e.runtime.kind).tensor_maps:
        raise OffloadError(
            "mgpuTensorMapEncodeTiledMemref (an nvgpu TMA descriptor) needs the CUDA runtime; "
            f"the {e.runtime.kind} target has no tensor maps"
        )
    ir = e.ir
    fn, b = e._shim("mgpuTensorMapEncodeTiledMemref", e.ptr, [e.i64, e.ptr] + [e.i64] * 5 + [e.ptr])
    rank, descriptor, data_type, interleave, swizzle, l2_promotion, oob_fill, box = fn.args
    fail = fn.append_basic_block("invalid")
    body = fn.append_basic_block("encode")
    bad_rank = b.or_(
        b.icmp_signed("<", rank, ir.Constant(e.i64, 1)),
        b.icmp_signed(">", rank, ir.Constant(e.i64, TENSOR_MAP_MAX_RANK)),
    )
    bad_type = b.icmp_unsigned(">=", data_type, ir.Constant(e.i64, len(TENSOR_MAP_ELEMENT_BYTES)))
    b.cbranch(b.or_(bad_rank, bad_type), fail, body)
    b.position_at_end(fail)
    _fail_exit(e, b, "mgpuTensorMapEncodeTiledMemref: rank %lld or data type %lld out of range\n", [rank, data_type])
    b.position_at_end(body)
    sizes_table = e.constant_table("tensor_map_element_bytes", e.i64, TENSOR_MAP_ELEMENT_BYTES)
    element_bytes = b.load(b.gep(sizes_table, [ir.Constant(e.i64, 0), data_type], inbounds=True), typ=e.i64)
    aligned = b.load(b.gep(descriptor, [ir.Constant(e.i64, 1)], source_etype=e.ptr), typ=e.ptr)
    offset = b.load(b.gep(descriptor, [ir.Constant(e.i64, 2)], source_etype=e.i64), typ=e.i64)
    address = b.gep(aligned, [b.mul(offset, element_bytes)], source_etype=e.i8)
    dims64 = ir.ArrayType(e.i64, TENSOR_MAP_MAX_RANK)
    dims32 = ir.ArrayType(e.i32, TENSOR_MAP_MAX_RANK)
    global_dim, global_strides = b.alloca(dims64), b.alloca(dims64)
    box_dim, element_strides = b.alloca(dims32), b.alloca(dims32)
    one64, one32, zero64 = ir.Constant(e.i64, 1), ir.Constant(e.i32, 1), ir.Constant(e.i64, 0)
    # Dimension i (innermost first) is memref dimension rank-1-i: unrolled over the 5 possible ranks,
    # an index past the rank reads dimension 0 and is replaced by the neutral value.
    for i in range(TENSOR_MAP_MAX_RANK):

        def source(distance, _b=b, _i=i):
            index = _b.sub(rank, ir.Constant(e.i64, distance + _i))
            inside = _b.icmp_signed(">=", index, zero64)
            return inside, _b.select(inside, index, zero64)

        inside, dim = source(1)
        size = b.load(b.gep(descriptor, [b.add(dim, ir.Constant(e.i64, 3))], source_etype=e.i64), typ=e.i64)
        b.store(b.select(inside, size, one64), b.gep(global_dim, [zero64, ir.Constant(e.i64, i)], inbounds=True))
        edge = b.load(b.gep(box, [dim], source_etype=e.i64), typ=e.i64)
        b.store(
            b.select(inside, b.trunc(edge, e.i32), one32),
            b.gep(box_dim, [zero64, ir.Constant(e.i64, i)], inbounds=True),
        )
        b.store(one32, b.gep(element_strides, [zero64, ir.Constant(e.i64, i)], inbounds=True))
        # Byte stride of dimension i+1 (memref dimension rank-2-i); strides live after the sizes.
        inside, dim = source(2)
        stride = b.load(
            b.gep(descriptor, [b.add(b.add(dim, rank), ir.Constant(e.i64, 3))], source_etype=e.i64), typ=e.i64
        )
        b.store(
            b.select(inside, b.mul(stride, element_bytes), zero64),
            b.gep(global_strides, [zero64, ir.Constant(e.i64, i)], inbounds=True),
        )
    entry_point = b.alloca(e.ptr)
    b.store(ir.Constant(e.ptr, None), entry_point)
    query = b.alloca(e.i32)
    b.store(ir.Constant(e.i32, -1), query)
    e.checked_call(
        b,
        "GetDriverEntryPointByVersion",
        [
            e.cstring("cuTensorMapEncodeTiled"),
            entry_point,
            ir.Constant(e.i32, TENSOR_MAP_DRIVER_VERSION),
            ir.Constant(e.i64, 0),
            query,
        ],
    )
    encode_type = ir.FunctionType(e.i32, [e.ptr, e.i32, e.i32, e.ptr, e.ptr, e.ptr, e.ptr, e.ptr] + [e.i32] * 4)
    # Loaded as a pointer to the function type: llvmlite takes an indirect call's signature from it.
    encode = b.load(entry_point, typ=encode_type.as_pointer())
    missing = b.or_(
        b.icmp_unsigned("!=", b.load(query, typ=e.i32), ir.Constant(e.i32, 0)),
        b.icmp_unsigned("==", encode, ir.Constant(e.ptr, None)),
    )
    no_driver = fn.append_basic_block("no_entry_point")
    call_block = fn.append_basic_block("call")
    b.cbranch(missing, no_driver, call_block)
    b.position_at_end(no_driver)
    _fail_exit(
        e,
        b,
        f"{e.runtime.api['GetDriverEntryPointByVersion']}: the driver does not provide cuTensorMapEncodeTiled\n",
        [],
    )
    b.position_at_end(call_block)
    tensor_map = b.alloca(ir.ArrayType(e.i8, TENSOR_MAP_BYTES))
    tensor_map.align = 64
    status = b.call(
        encode,
        [
            tensor_map,
            b.trunc(data_type, e.i32),
            b.trunc(rank, e.i32),
            address,
            global_dim,
            global_strides,
            box_dim,
            element_strides,
            *(b.trunc(v, e.i32) for v in (interleave, swizzle, l2_promotion, oob_fill)),
        ],
    )
    failed = fn.append_basic_block("encode_failed")
    copy = fn.append_basic_block("copy")
    b.cbranch(b.icmp_unsigned("!=", status, ir.Constant(e.i32, 0)), failed, copy)
    b.position_at_end(failed)
    _fail_exit(e, b, "cuTensorMapEncodeTiled: CUresult %d\n", [status])
    b.position_at_end(copy)
    device_map = e.call_with_out_pointer(b, "Malloc", [ir.Constant(e.i64, TENSOR_MAP_BYTES)])
    null_stream = ir.Constant(e.ptr, None)
    e.checked_call(
        b,
        "MemcpyAsync",
        [
            device_map,
            tensor_map,
            ir.Constant(e.i64, TENSOR_MAP_BYTES),
            ir.Constant(e.i32, e.runtime.memcpy_default),
            null_stream,
        ],
    )
    e.checked_call(b, "StreamSynchronize", [null_stream])  # the map lives on this stack frame
    b.ret(device_map)


def _fail_exit(e: RuntimeEmitter, b, message: str, values) -> None:
    dprintf = e.declare("dprintf", e.i32, [e.i32, e.ptr], var_arg=True)
    b.call(dprintf, [e.ir.Constant(e.i32, 2), e.cstring(message), *values])
    b.call(e.declare("exit", e.void, [e.i32]), [e.ir.Constant(e.i32, EXIT_STATUS_ON_RUNTIME_ERROR)])
    b.unreachable()


SHIMS = {
    "mgpuStreamCreate": _stream_create,
    "mgpuStreamDestroy": _unary_status("mgpuStreamDestroy", "StreamDestroy"),
    "mgpuStreamSynchronize": _unary_status("mgpuStreamSynchronize", "StreamSynchronize"),
    "mgpuStreamWaitEvent": _stream_wait_event,
    "mgpuEventCreate": _event_create,
    "mgpuEventDestroy": _unary_status("mgpuEventDestroy", "EventDestroy"),
    "mgpuEventSynchronize": _unary_status("mgpuEventSynchronize", "EventSynchronize"),
    "mgpuEventRecord": _event_record,
    "mgpuMemAlloc": _mem_alloc,
    "mgpuMemFree": _mem_free,
    "mgpuMemcpy": _memcpy,
    "mgpuMemset16": _memset(16),
    "mgpuMemset32": _memset(32),
    "mgpuMemHostRegisterMemRef": _host_register,
    "mgpuMemHostUnregisterMemRef": _host_unregister,
    "mgpuSetDefaultDevice": _set_default_device,
    "mgpuMemGetDeviceMemRef1dFloat": _device_memref_1d("mgpuMemGetDeviceMemRef1dFloat"),
    "mgpuMemGetDeviceMemRef1dInt32": _device_memref_1d("mgpuMemGetDeviceMemRef1dInt32"),
    "mgpuTensorMapEncodeTiledMemref": _tensor_map_encode_tiled,
    **SPARSE_SHIMS,
    **STRUCTURED_SHIMS,
}
