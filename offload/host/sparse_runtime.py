"""The gpu dialect's sparse library operations on the vendor's sparse library (cuSPARSE, hipSPARSE),
emitted into the bundle.

Upstream `gpu-to-llvm` lowers gpu.create_dn_tensor/create_csr/spmv/... to calls of `mgpu*` functions
(libmlir_cuda_runtime's cuSPARSE wrappers). This module defines those functions (llvmlite.ir) on the
library of the record in SPARSE_LIBRARIES, with upstream's meaning: dense matrices row-major with the
leading dimension their column count, indices zero-based, alpha = beta = 1 in the compute type, the
default algorithm, buffer sizes of 0 reported as 1 (the program allocates what the query returns).
Unlike upstream, each operation runs on its token's stream (the library's SetStream before each call).

One library handle per program, created on first use and destroyed at exit (atexit). Every library
status is checked: on failure the program prints `<function>: <library error string>` on stderr and
exits with status 1, as the runtime shims do.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from offload.errors import OffloadError

EXIT_STATUS_ON_LIBRARY_ERROR = 1
HANDLE_GLOBAL = "__mlir_offload_sparse.handle"
HANDLE_FUNCTION = "__mlir_offload_sparse.handle_on"
DESTROY_FUNCTION = "__mlir_offload_sparse.destroy_handle"
CHECK_FUNCTION = "__mlir_offload_sparse.check"  # .<library prefix>
SCALAR_BYTES = 16  # the largest compute type's scalar (complex double)


@dataclass(frozen=True)
class SparseLibrary:
    """A vendor's sparse library: its -l name, its function prefix and the enum values the shims pass."""

    kind: str  # offload kind
    library: str  # -l<library>
    prefix: str  # "cusparse": cusparseCreate, cusparseSpMV, ...
    index_base_zero: int
    order_row: int
    default_algorithm: int
    # Bytes of one (alpha or beta) = 1 per data type enum value (cudaDataType: R_32F 0, R_64F 1, R_16F 2,
    # R_8I 3, C_32F 4, C_64F 5, C_16F 6, C_8I 7, R_8U 8, C_8U 9, R_32I 10, C_32I 11, R_32U 12, C_32U 13,
    # R_16BF 14, C_16BF 15), little-endian, the imaginary part zero.
    one_by_data_type: tuple[int, ...]


CUSPARSE = SparseLibrary(
    kind="cuda",
    library="cusparse",
    prefix="cusparse",
    index_base_zero=0,  # CUSPARSE_INDEX_BASE_ZERO
    order_row=2,  # CUSPARSE_ORDER_ROW
    default_algorithm=0,  # CUSPARSE_SPMV_ALG_DEFAULT, ..._SPMM_, ..._SDDMM_, CUSPARSE_SPGEMM_DEFAULT
    one_by_data_type=(
        0x3F800000,
        0x3FF0000000000000,
        0x3C00,
        1,
        0x3F800000,
        0x3FF0000000000000,
        0x3C00,
        1,
        1,
        1,
        1,
        1,
        1,
        1,
        0x3F80,
        0x3F80,
    ),
)

# hipSPARSE's generic API mirrors cuSPARSE's: the same function names after the prefix, the same enum values
# (hipDataType, hipsparseIndexType_t, HIPSPARSE_ORDER_ROW 2, the default algorithms 0, the statuses).
HIPSPARSE = replace(CUSPARSE, kind="hip", library="hipsparse", prefix="hipsparse")

SPARSE_LIBRARIES = {library.kind: library for library in (CUSPARSE, HIPSPARSE)}

# The gpu dialect's sparse host ops (their mgpu* functions are SPARSE_SHIMS' keys).
SPARSE_OPS = frozenset(
    (
        "gpu.create_dn_tensor",
        "gpu.destroy_dn_tensor",
        "gpu.create_coo",
        "gpu.create_coo_aos",
        "gpu.create_csr",
        "gpu.create_csc",
        "gpu.create_bsr",
        "gpu.create_2to4_spmat",
        "gpu.destroy_sp_mat",
        "gpu.spmat_get_size",
        "gpu.set_csr_pointers",
        "gpu.spmv_buffer_size",
        "gpu.spmv",
        "gpu.spmm_buffer_size",
        "gpu.spmm",
        "gpu.sddmm_buffer_size",
        "gpu.sddmm",
        "gpu.spgemm_create_descr",
        "gpu.spgemm_destroy_descr",
        "gpu.spgemm_work_estimation_or_compute",
        "gpu.spgemm_copy",
    )
)

# Ops the generated code does not provide, and why (refused at compile, at the op).
UNSUPPORTED_OPS = {
    "gpu.create_coo_aos": "cuSPARSE 12 removed the AoS COO format (cusparseCreateCooAoS): use gpu.create_coo",
}


@dataclass(frozen=True)
class StructuredLibrary:
    """A vendor's library for 2:4 structured sparsity (cuSPARSELt): its -l name, prefix and values."""

    kind: str
    library: str  # -l<library>
    prefix: str  # "cusparseLt"
    opaque_bytes: int  # the room given to each of its handle, matrix, matmul, algorithm and plan structs
    alignment: int  # the bytes each matrix's values are aligned to (upstream's 16)
    order_row: int
    sparsity_50_percent: int
    default_algorithm: int
    prune_strip: int  # CUSPARSELT_PRUNE_SPMMA_STRIP: upstream's pruning
    # MLIR's compute type value (gpu-to-llvm: f16 0, i32 1) -> the library's cusparseComputeType.
    compute_types: tuple[tuple[int, int], ...]


CUSPARSELT = StructuredLibrary(
    kind="cuda",
    library="cusparseLt",
    prefix="cusparseLt",
    # At least each struct's size in every cuSPARSELt for CUDA 12 and 13 (0.10's are 512 bytes, earlier
    # ones up to 1024), a multiple of their 16-byte alignment, and 4 of them plus two i64 fit upstream's
    # 44104-byte slot for a 2:4 matrix (one plus a pointer its 11032-byte slot for a dense one).
    opaque_bytes=10240,
    alignment=16,
    order_row=2,
    sparsity_50_percent=0,
    default_algorithm=0,
    prune_strip=1,
    compute_types=((0, 1), (1, 0)),  # CUSPARSE_COMPUTE_16F 1, CUSPARSE_COMPUTE_32I 0
)
STRUCTURED_LIBRARIES = {library.kind: library for library in (CUSPARSELT,)}
STRUCTURED_OPS = frozenset(("gpu.create_2to4_spmat",))


def sparse_library_for(offload_kind: str) -> SparseLibrary:
    library = SPARSE_LIBRARIES.get(offload_kind)
    if library is None:
        raise OffloadError(
            f"the gpu dialect's sparse operations need a sparse library; mlir-offload has none for the "
            f"{offload_kind} runtime (supported: {', '.join(sorted(SPARSE_LIBRARIES))})"
        )
    return library


def unavailable_op(name: str, offload_kind: str) -> str | None:
    """Why the runtime of `offload_kind` cannot run sparse op `name`, or None."""
    if name in STRUCTURED_OPS and offload_kind not in STRUCTURED_LIBRARIES:
        return f"2:4 structured sparsity needs cuSPARSELt; the {offload_kind} runtime's sparse library has none"
    if name in SPARSE_OPS and offload_kind not in SPARSE_LIBRARIES:
        return (
            f"the gpu dialect's sparse operations need a sparse library; mlir-offload has none for the "
            f"{offload_kind} runtime"
        )
    return None


def libraries_used(runtime_functions, offload_kind: str) -> tuple[str, ...]:
    """The -l names the host code's mgpu* functions need beyond the vendor runtime."""
    used = []
    if any(name in SPARSE_SHIMS for name in runtime_functions):
        used.append(sparse_library_for(offload_kind).library)
    if any(name in STRUCTURED_SHIMS for name in runtime_functions):
        used.append(STRUCTURED_LIBRARIES[offload_kind].library)
    return tuple(used)


class SparseEmitter:
    """The library's handle, checked calls and scalars, inside a runtime.RuntimeEmitter's module."""

    def __init__(self, e, library=None):
        self.e = e
        self.library = library or sparse_library_for(e.runtime.kind)

    def function(self, generic: str, args, ret=None):
        e = self.e
        return e.declare(self.library.prefix + generic, ret or e.i32, args)

    def check_function(self):
        """`void check(i32 status, ptr name)`: a nonzero status prints `name: error string` and exits 1."""
        e = self.e
        ir = e.ir
        name = f"{CHECK_FUNCTION}.{self.library.prefix}"
        existing = e.module.globals.get(name)
        if existing is not None:
            return existing
        fn = ir.Function(e.module, ir.FunctionType(e.void, [e.i32, e.ptr]), name)
        fn.linkage = "internal"
        status, name = fn.args
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        failed, done = fn.append_basic_block("failed"), fn.append_basic_block("done")
        b.cbranch(b.icmp_unsigned("!=", status, ir.Constant(e.i32, 0)), failed, done)
        b.position_at_end(failed)
        message = b.call(self.function("GetErrorString", [e.i32], e.ptr), [status])
        dprintf = e.declare("dprintf", e.i32, [e.i32, e.ptr], var_arg=True)
        b.call(dprintf, [ir.Constant(e.i32, 2), e.cstring("%s: %s\n"), name, message])
        b.call(e.declare("exit", e.void, [e.i32]), [ir.Constant(e.i32, EXIT_STATUS_ON_LIBRARY_ERROR)])
        b.unreachable()
        b.position_at_end(done)
        b.ret_void()
        return fn

    def call(self, b, generic: str, args) -> None:
        """A checked call of the library's `generic` function (every argument a pointer, i32 or i64)."""
        function = self.function(generic, [a.type for a in args])
        status = b.call(function, list(args))
        b.call(self.check_function(), [status, self.e.cstring(self.library.prefix + generic)])

    def create(self, b, generic: str, args):
        """`T x; check(f(&x, ...)); return x` for the library's Create functions."""
        e = self.e
        slot = b.alloca(e.ptr)
        b.store(e.ir.Constant(e.ptr, None), slot)
        self.call(b, generic, [slot, *args])
        return b.load(slot, typ=e.ptr)

    def handle_on(self, b, stream):
        """The program's handle (created on first use, destroyed at exit), set to work on `stream`."""
        return b.call(self._handle_function(), [stream])

    def _handle_function(self):
        e = self.e
        ir = e.ir
        existing = e.module.globals.get(HANDLE_FUNCTION)
        if existing is not None:
            return existing
        handle = ir.GlobalVariable(e.module, e.ptr, HANDLE_GLOBAL)
        handle.linkage = "internal"
        handle.initializer = ir.Constant(e.ptr, None)
        fn = ir.Function(e.module, ir.FunctionType(e.ptr, [e.ptr]), HANDLE_FUNCTION)
        fn.linkage = "internal"
        (stream,) = fn.args
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        create, ready = fn.append_basic_block("create"), fn.append_basic_block("ready")
        b.cbranch(b.icmp_unsigned("==", b.load(handle, typ=e.ptr), ir.Constant(e.ptr, None)), create, ready)
        b.position_at_end(create)
        self.call(b, "Create", [handle])
        atexit = e.declare("atexit", e.i32, [e.ptr])
        registered = b.call(atexit, [self._destroy_function(handle)])
        failed = fn.append_basic_block("atexit_failed")
        b.cbranch(b.icmp_unsigned("==", registered, ir.Constant(e.i32, 0)), ready, failed)
        b.position_at_end(failed)
        dprintf = e.declare("dprintf", e.i32, [e.i32, e.ptr], var_arg=True)
        b.call(dprintf, [ir.Constant(e.i32, 2), e.cstring("atexit: cannot register the sparse library's cleanup\n")])
        b.call(e.declare("exit", e.void, [e.i32]), [ir.Constant(e.i32, EXIT_STATUS_ON_LIBRARY_ERROR)])
        b.unreachable()
        b.position_at_end(ready)
        current = b.load(handle, typ=e.ptr)
        self.call(b, "SetStream", [current, stream])
        b.ret(current)
        return fn

    def _destroy_function(self, handle):
        """At exit: destroy the handle; a failure prints its line and ends the process with status 1
        (_exit: exit may not be called again from an exit handler)."""
        e = self.e
        ir = e.ir
        fn = ir.Function(e.module, ir.FunctionType(e.void, []), DESTROY_FUNCTION)
        fn.linkage = "internal"
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        current = b.load(handle, typ=e.ptr)
        destroy, done = fn.append_basic_block("destroy"), fn.append_basic_block("done")
        b.cbranch(b.icmp_unsigned("==", current, ir.Constant(e.ptr, None)), done, destroy)  # destroyed already
        b.position_at_end(destroy)
        status = b.call(self.function("Destroy", [e.ptr]), [current])
        failed = fn.append_basic_block("failed")
        b.cbranch(b.icmp_unsigned("!=", status, ir.Constant(e.i32, 0)), failed, done)
        b.position_at_end(failed)
        message = b.call(self.function("GetErrorString", [e.i32], e.ptr), [status])
        dprintf = e.declare("dprintf", e.i32, [e.i32, e.ptr], var_arg=True)
        b.call(
            dprintf, [ir.Constant(e.i32, 2), e.cstring("%s: %s\n"), e.cstring(self.library.prefix + "Destroy"), message]
        )
        b.call(e.declare("_exit", e.void, [e.i32]), [ir.Constant(e.i32, EXIT_STATUS_ON_LIBRARY_ERROR)])
        b.unreachable()
        b.position_at_end(done)
        b.ret_void()
        return fn

    def destroy_now(self, b, fn) -> None:
        """Destroy the handle if it exists (checked), leaving none for the exit handler."""
        e = self.e
        ir = e.ir
        self._handle_function()
        handle = e.module.globals[HANDLE_GLOBAL]
        current = b.load(handle, typ=e.ptr)
        destroy, done = fn.append_basic_block("destroy"), fn.append_basic_block("destroyed")
        b.cbranch(b.icmp_unsigned("==", current, ir.Constant(e.ptr, None)), done, destroy)
        b.position_at_end(destroy)
        self.call(b, "Destroy", [current])
        b.store(ir.Constant(e.ptr, None), handle)
        b.branch(done)
        b.position_at_end(done)

    def one(self, b, compute_type):
        """A pointer to the scalar 1 of the compute type (upstream's alpha and beta); an unknown type
        gets zero bytes, which the library refuses with its own status."""
        e = self.e
        ir = e.ir
        values = self.library.one_by_data_type
        table = e.constant_table("sparse_one", e.i64, values)
        slot = b.alloca(ir.ArrayType(e.i64, SCALAR_BYTES // 8))
        b.store(ir.Constant(slot.allocated_type, None), slot)
        index = b.zext(compute_type, e.i64)
        known = b.icmp_unsigned("<", index, ir.Constant(e.i64, len(values)))
        safe = b.select(known, index, ir.Constant(e.i64, 0))
        value = b.load(b.gep(table, [ir.Constant(e.i64, 0), safe], inbounds=True), typ=e.i64)
        b.store(
            b.select(known, value, ir.Constant(e.i64, 0)), b.gep(slot, [ir.Constant(e.i64, 0), ir.Constant(e.i64, 0)])
        )
        return slot

    def constant(self, value: int):
        return self.e.ir.Constant(self.e.i32, value)


def _shim(e, name: str, ret, args):
    fn = e.declare(name, ret, args)
    return fn, e.ir.IRBuilder(fn.append_basic_block("entry"))


def _create_dn_vec(e):
    s = SparseEmitter(e)
    fn, b = _shim(e, "mgpuCreateDnVec", e.ptr, [e.i64, e.ptr, e.i32, e.ptr])
    size, values, data_type, _stream = fn.args
    b.ret(s.create(b, "CreateDnVec", [size, values, data_type]))


def _create_dn_mat(e):
    s = SparseEmitter(e)
    fn, b = _shim(e, "mgpuCreateDnMat", e.ptr, [e.i64, e.i64, e.ptr, e.i32, e.ptr])
    rows, cols, values, data_type, _stream = fn.args
    order = s.constant(s.library.order_row)
    b.ret(s.create(b, "CreateDnMat", [rows, cols, cols, values, data_type, order]))


def _destroy(shim: str, generic: str):
    def emit(e):
        s = SparseEmitter(e)
        fn, b = _shim(e, shim, e.void, [e.ptr, e.ptr])
        s.call(b, generic, [fn.args[0]])
        b.ret_void()

    return emit


def _create_coo(e):
    s = SparseEmitter(e)
    fn, b = _shim(e, "mgpuCreateCoo", e.ptr, [e.i64, e.i64, e.i64, e.ptr, e.ptr, e.ptr, e.i32, e.i32, e.ptr])
    rows, cols, nnz, row_indices, col_indices, values, index_type, data_type, _stream = fn.args
    base = s.constant(s.library.index_base_zero)
    b.ret(s.create(b, "CreateCoo", [rows, cols, nnz, row_indices, col_indices, values, index_type, base, data_type]))


def _create_compressed(shim: str, generic: str):
    """CSR and CSC: (rows, cols, nnz, positions, coordinates, values, position type, coordinate type, value type)."""

    def emit(e):
        s = SparseEmitter(e)
        fn, b = _shim(e, shim, e.ptr, [e.i64, e.i64, e.i64, e.ptr, e.ptr, e.ptr, e.i32, e.i32, e.i32, e.ptr])
        *operands, position_type, coordinate_type, data_type, _stream = fn.args
        base = s.constant(s.library.index_base_zero)
        b.ret(s.create(b, generic, [*operands, position_type, coordinate_type, base, data_type]))

    return emit


def _create_bsr(e):
    s = SparseEmitter(e)
    fn, b = _shim(
        e, "mgpuCreateBsr", e.ptr, [e.i64, e.i64, e.i64, e.i64, e.i64, e.ptr, e.ptr, e.ptr, e.i32, e.i32, e.i32, e.ptr]
    )
    *operands, position_type, coordinate_type, data_type, _stream = fn.args
    base, order = s.constant(s.library.index_base_zero), s.constant(s.library.order_row)
    b.ret(s.create(b, "CreateBsr", [*operands, position_type, coordinate_type, base, data_type, order]))


def _buffer_size(shim: str, generic: str, two_modes: bool):
    """SpMV/SpMM/SDDMM buffer-size queries: ([mode A, [mode B]], A, B, C, compute type, stream) -> bytes."""

    def emit(e):
        s = SparseEmitter(e)
        ir = e.ir
        modes = [e.i32, e.i32] if two_modes else [e.i32]
        fn, b = _shim(e, shim, e.i64, [*modes, e.ptr, e.ptr, e.ptr, e.i32, e.ptr])
        *mode_args, a, x, y, compute_type, stream = fn.args
        handle = s.handle_on(b, stream)
        one = s.one(b, compute_type)
        size = b.alloca(e.i64)
        b.store(ir.Constant(e.i64, 0), size)
        algorithm = s.constant(s.library.default_algorithm)
        s.call(b, generic, [handle, *mode_args, one, a, x, one, y, compute_type, algorithm, size])
        bytes_ = b.load(size, typ=e.i64)
        zero = b.icmp_unsigned("==", bytes_, ir.Constant(e.i64, 0))
        b.ret(b.select(zero, ir.Constant(e.i64, 1), bytes_))  # upstream's: never a zero-byte allocation

    return emit


def _compute(shim: str, generic: str, two_modes: bool):
    """SpMV/SpMM/SDDMM: ([mode A, [mode B]], A, B, C, compute type, buffer, stream)."""

    def emit(e):
        s = SparseEmitter(e)
        modes = [e.i32, e.i32] if two_modes else [e.i32]
        fn, b = _shim(e, shim, e.void, [*modes, e.ptr, e.ptr, e.ptr, e.i32, e.ptr, e.ptr])
        *mode_args, a, x, y, compute_type, buffer, stream = fn.args
        handle = s.handle_on(b, stream)
        one = s.one(b, compute_type)
        algorithm = s.constant(s.library.default_algorithm)
        s.call(b, generic, [handle, *mode_args, one, a, x, one, y, compute_type, algorithm, buffer])
        b.ret_void()

    return emit


def _spgemm_create(e):
    s = SparseEmitter(e)
    fn, b = _shim(e, "mgpuSpGEMMCreateDescr", e.ptr, [e.ptr])
    b.ret(s.create(b, "SpGEMM_createDescr", []))


def _spgemm_phase(shim: str, generic: str):
    """Work estimation and compute: (descr, mode A, mode B, A, B, C, compute type, buffer bytes, buffer,
    stream) -> the bytes the phase needs (a query with a null buffer) or used."""

    def emit(e):
        s = SparseEmitter(e)
        fn, b = _shim(e, shim, e.i64, [e.ptr, e.i32, e.i32, e.ptr, e.ptr, e.ptr, e.i32, e.i64, e.ptr, e.ptr])
        descr, mode_a, mode_b, a, bm, c, compute_type, size_in, buffer, stream = fn.args
        handle = s.handle_on(b, stream)
        one = s.one(b, compute_type)
        size = b.alloca(e.i64)
        b.store(size_in, size)
        algorithm = s.constant(s.library.default_algorithm)
        s.call(b, generic, [handle, mode_a, mode_b, one, a, bm, one, c, compute_type, algorithm, descr, size, buffer])
        b.ret(b.load(size, typ=e.i64))

    return emit


def _spgemm_copy(e):
    s = SparseEmitter(e)
    fn, b = _shim(e, "mgpuSpGEMMCopy", e.void, [e.ptr, e.i32, e.i32, e.ptr, e.ptr, e.ptr, e.i32, e.ptr])
    descr, mode_a, mode_b, a, bm, c, compute_type, stream = fn.args
    handle = s.handle_on(b, stream)
    one = s.one(b, compute_type)
    algorithm = s.constant(s.library.default_algorithm)
    s.call(b, "SpGEMM_copy", [handle, mode_a, mode_b, one, a, bm, one, c, compute_type, algorithm, descr])
    b.ret_void()


def _spmat_get_size(e):
    s = SparseEmitter(e)
    fn, b = _shim(e, "mgpuSpMatGetSize", e.void, [e.ptr, e.ptr, e.ptr, e.ptr, e.ptr])
    matrix, rows, cols, nnz, _stream = fn.args
    s.call(b, "SpMatGetSize", [matrix, rows, cols, nnz])
    b.ret_void()


def _set_csr_pointers(e):
    s = SparseEmitter(e)
    fn, b = _shim(e, "mgpuSetCsrPointers", e.void, [e.ptr, e.ptr, e.ptr, e.ptr, e.ptr])
    matrix, positions, coordinates, values, _stream = fn.args
    s.call(b, "CsrSetPointers", [matrix, positions, coordinates, values])
    b.ret_void()


def _create_env(e):
    """mgpuCreateSparseEnv(): upstream's programs call it before their sparse ops; the handle is made here."""
    s = SparseEmitter(e)
    fn, b = _shim(e, "mgpuCreateSparseEnv", e.void, [])
    s.handle_on(b, e.ir.Constant(e.ptr, None))
    b.ret_void()


def _destroy_env(e):
    s = SparseEmitter(e)
    fn, b = _shim(e, "mgpuDestroySparseEnv", e.void, [])
    s.destroy_now(b, fn)
    b.ret_void()


SPARSE_SHIMS = {
    "mgpuCreateSparseEnv": _create_env,
    "mgpuDestroySparseEnv": _destroy_env,
    "mgpuCreateDnVec": _create_dn_vec,
    "mgpuDestroyDnVec": _destroy("mgpuDestroyDnVec", "DestroyDnVec"),
    "mgpuCreateDnMat": _create_dn_mat,
    "mgpuDestroyDnMat": _destroy("mgpuDestroyDnMat", "DestroyDnMat"),
    "mgpuCreateCoo": _create_coo,
    "mgpuCreateCsr": _create_compressed("mgpuCreateCsr", "CreateCsr"),
    "mgpuCreateCsc": _create_compressed("mgpuCreateCsc", "CreateCsc"),
    "mgpuCreateBsr": _create_bsr,
    "mgpuDestroySpMat": _destroy("mgpuDestroySpMat", "DestroySpMat"),
    "mgpuSpMatGetSize": _spmat_get_size,
    "mgpuSetCsrPointers": _set_csr_pointers,
    "mgpuSpMVBufferSize": _buffer_size("mgpuSpMVBufferSize", "SpMV_bufferSize", two_modes=False),
    "mgpuSpMV": _compute("mgpuSpMV", "SpMV", two_modes=False),
    "mgpuSpMMBufferSize": _buffer_size("mgpuSpMMBufferSize", "SpMM_bufferSize", two_modes=True),
    "mgpuSpMM": _compute("mgpuSpMM", "SpMM", two_modes=True),
    "mgpuSDDMMBufferSize": _buffer_size("mgpuSDDMMBufferSize", "SDDMM_bufferSize", two_modes=True),
    "mgpuSDDMM": _compute("mgpuSDDMM", "SDDMM", two_modes=True),
    "mgpuSpGEMMCreateDescr": _spgemm_create,
    "mgpuSpGEMMDestroyDescr": _destroy("mgpuSpGEMMDestroyDescr", "SpGEMM_destroyDescr"),
    "mgpuSpGEMMWorkEstimation": _spgemm_phase("mgpuSpGEMMWorkEstimation", "SpGEMM_workEstimation"),
    "mgpuSpGEMMCompute": _spgemm_phase("mgpuSpGEMMCompute", "SpGEMM_compute"),
    "mgpuSpGEMMCopy": _spgemm_copy,
}


# ---- 2:4 structured sparsity (cuSPARSELt) ----------------------------------------------------------------
# gpu-to-llvm gives each 2:4 matrix and each dense matrix used with one a stack slot of upstream's sizes
# (44104 and 11032 bytes, 16-byte aligned), which these shims lay out as
#   2:4 matrix: matrix descriptor, algorithm selection, plan, matmul descriptor (opaque_bytes each), then
#               i64 values pointer, i64 planned (the plan and algorithm selection exist)
#   dense matrix: matrix descriptor, then i64 values pointer.
LT_HANDLE_GLOBAL = "__mlir_offload_sparse_lt.handle"
LT_READY_GLOBAL = "__mlir_offload_sparse_lt.ready"
LT_HANDLE_FUNCTION = "__mlir_offload_sparse_lt.handle_ready"
LT_DESTROY_FUNCTION = "__mlir_offload_sparse_lt.destroy_handle"
LT_SPARSE_SLOTS = ("matrix", "algorithm", "plan", "matmul")


class StructuredEmitter(SparseEmitter):
    def __init__(self, e):
        library = STRUCTURED_LIBRARIES.get(e.runtime.kind)
        if library is None:
            raise OffloadError(f"2:4 structured sparsity needs cuSPARSELt, which the {e.runtime.kind} runtime lacks")
        super().__init__(e, library)
        self.lt = library

    def slot(self, b, base, index: int):
        """The address of the index-th opaque struct (or, past them, i64 field) of a shim-laid-out slot."""
        return b.gep(base, [self.e.ir.Constant(self.e.i64, index * self.lt.opaque_bytes)], source_etype=self.e.i8)

    def field(self, b, base, opaque_count: int, index: int):
        offset = opaque_count * self.lt.opaque_bytes + 8 * index
        return b.gep(base, [self.e.ir.Constant(self.e.i64, offset)], source_etype=self.e.i8)

    def handle(self, b):
        """The program's cuSPARSELt handle (initialized on first use, destroyed at exit)."""
        return b.call(self._lt_handle_function(), [])

    def _lt_handle_function(self):
        e = self.e
        ir = e.ir
        existing = e.module.globals.get(LT_HANDLE_FUNCTION)
        if existing is not None:
            return existing
        storage = ir.GlobalVariable(e.module, ir.ArrayType(e.i8, self.lt.opaque_bytes), LT_HANDLE_GLOBAL)
        storage.linkage = "internal"
        storage.initializer = ir.Constant(storage.value_type, None)
        storage.align = 16
        ready = ir.GlobalVariable(e.module, e.i8, LT_READY_GLOBAL)
        ready.linkage = "internal"
        ready.initializer = ir.Constant(e.i8, 0)
        fn = ir.Function(e.module, ir.FunctionType(e.ptr, []), LT_HANDLE_FUNCTION)
        fn.linkage = "internal"
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        create, done = fn.append_basic_block("create"), fn.append_basic_block("ready")
        b.cbranch(b.icmp_unsigned("==", b.load(ready, typ=e.i8), ir.Constant(e.i8, 0)), create, done)
        b.position_at_end(create)
        self.call(b, "Init", [storage])
        b.store(ir.Constant(e.i8, 1), ready)
        destroy = ir.Function(e.module, ir.FunctionType(e.void, []), LT_DESTROY_FUNCTION)
        destroy.linkage = "internal"
        db = ir.IRBuilder(destroy.append_basic_block("entry"))
        live, fine = destroy.append_basic_block("live"), destroy.append_basic_block("done")
        db.cbranch(db.icmp_unsigned("==", db.load(ready, typ=e.i8), ir.Constant(e.i8, 0)), fine, live)
        db.position_at_end(live)
        status = db.call(self.function("Destroy", [e.ptr]), [storage])
        failed = destroy.append_basic_block("failed")
        db.cbranch(db.icmp_unsigned("!=", status, ir.Constant(e.i32, 0)), failed, fine)
        db.position_at_end(failed)
        message = db.call(self.function("GetErrorString", [e.i32], e.ptr), [status])
        dprintf = e.declare("dprintf", e.i32, [e.i32, e.ptr], var_arg=True)
        db.call(dprintf, [ir.Constant(e.i32, 2), e.cstring("%s: %s\n"), e.cstring("cusparseLtDestroy"), message])
        db.call(e.declare("_exit", e.void, [e.i32]), [ir.Constant(e.i32, EXIT_STATUS_ON_LIBRARY_ERROR)])
        db.unreachable()
        db.position_at_end(fine)
        db.ret_void()
        registered = b.call(e.declare("atexit", e.i32, [e.ptr]), [destroy])
        atexit_failed = fn.append_basic_block("atexit_failed")
        b.cbranch(b.icmp_unsigned("==", registered, ir.Constant(e.i32, 0)), done, atexit_failed)
        b.position_at_end(atexit_failed)
        b.call(dprintf, [ir.Constant(e.i32, 2), e.cstring("atexit: cannot register the sparse library's cleanup\n")])
        b.call(e.declare("exit", e.void, [e.i32]), [ir.Constant(e.i32, EXIT_STATUS_ON_LIBRARY_ERROR)])
        b.unreachable()
        b.position_at_end(done)
        b.ret(storage)
        return fn

    def zeroed(self, b, base, size: int) -> None:
        e = self.e
        memset = e.declare("memset", e.ptr, [e.ptr, e.i32, e.i64])
        b.call(memset, [base, e.ir.Constant(e.i32, 0), e.ir.Constant(e.i64, size)])

    def compute_type(self, b, mlir_value):
        """The library's compute type for MLIR's value (unknown values pass through, for the library to refuse)."""
        result = mlir_value
        for ours, theirs in self.lt.compute_types:
            same = b.icmp_unsigned("==", mlir_value, self.constant(ours))
            result = b.select(same, self.constant(theirs), result)
        return result


def _lt_create_env(e):
    s = StructuredEmitter(e)
    fn, b = _shim(e, "mgpuCreateSparseLtEnv", e.void, [])
    s.handle(b)
    b.ret_void()


def _lt_destroy_env(e):
    """mgpuDestroySparseLtEnv(): the handle destroyed now (checked) if it was made; none left for exit."""
    s = StructuredEmitter(e)
    ir = e.ir
    fn, b = _shim(e, "mgpuDestroySparseLtEnv", e.void, [])
    s.handle(b)  # makes sure the globals exist (and the handle: destroying one never made is harmless)
    storage, ready = e.module.globals[LT_HANDLE_GLOBAL], e.module.globals[LT_READY_GLOBAL]
    s.call(b, "Destroy", [storage])
    b.store(ir.Constant(e.i8, 0), ready)
    b.ret_void()


def _lt_create_2to4(e):
    s = StructuredEmitter(e)
    fn, b = _shim(e, "mgpuCusparseLtCreate2To4SpMat", e.void, [e.ptr, e.i64, e.i64, e.ptr, e.i32, e.ptr])
    slot, rows, cols, values, data_type, _stream = fn.args
    lib = s.lt
    s.zeroed(b, slot, len(LT_SPARSE_SLOTS) * lib.opaque_bytes + 16)
    b.store(values, s.field(b, slot, len(LT_SPARSE_SLOTS), 0))
    alignment = e.ir.Constant(e.i32, lib.alignment)
    s.call(
        b,
        "StructuredDescriptorInit",
        [
            s.handle(b),
            slot,
            rows,
            cols,
            cols,
            alignment,
            data_type,
            s.constant(lib.order_row),
            s.constant(lib.sparsity_50_percent),
        ],
    )
    b.ret_void()


def _lt_create_dense(e):
    s = StructuredEmitter(e)
    fn, b = _shim(e, "mgpuCreateCuSparseLtDnMat", e.void, [e.ptr, e.i64, e.i64, e.ptr, e.i32, e.ptr])
    slot, rows, cols, values, data_type, _stream = fn.args
    lib = s.lt
    s.zeroed(b, slot, lib.opaque_bytes + 8)
    b.store(values, s.field(b, slot, 1, 0))
    alignment = e.ir.Constant(e.i32, lib.alignment)
    s.call(
        b, "DenseDescriptorInit", [s.handle(b), slot, rows, cols, cols, alignment, data_type, s.constant(lib.order_row)]
    )
    b.ret_void()


def _lt_buffer_size(e):
    """mgpuCuSparseLtSpMMBufferSize(i64 sizes[3], mode A, mode B, A, B, C, compute type, prune flag, stream):
    the matmul descriptor, algorithm and plan of A; the workspace, compressed and compression-buffer sizes
    (0 reported as 1); then, as the flag says (1: prune, 2: prune and check), A pruned in place to 2:4 along
    its rows, the check's failure one warning line."""
    s = StructuredEmitter(e)
    ir = e.ir
    fn, b = _shim(
        e, "mgpuCuSparseLtSpMMBufferSize", e.void, [e.ptr, e.i32, e.i32, e.ptr, e.ptr, e.ptr, e.i32, e.i32, e.ptr]
    )
    sizes, mode_a, mode_b, a, bm, c, compute, prune, stream = fn.args
    lib = s.lt
    handle = s.handle(b)
    matrix, algorithm, plan, matmul = (s.slot(b, a, i) for i in range(4))
    s.call(b, "MatmulDescriptorInit", [handle, matmul, mode_a, mode_b, matrix, bm, c, c, s.compute_type(b, compute)])
    s.call(b, "MatmulAlgSelectionInit", [handle, algorithm, matmul, s.constant(lib.default_algorithm)])
    s.call(b, "MatmulPlanInit", [handle, plan, matmul, algorithm])
    b.store(ir.Constant(e.i64, 1), s.field(b, a, len(LT_SPARSE_SLOTS), 1))
    workspace = sizes
    compressed = b.gep(sizes, [ir.Constant(e.i64, 1)], source_etype=e.i64)
    compressed_buffer = b.gep(sizes, [ir.Constant(e.i64, 2)], source_etype=e.i64)
    s.call(b, "MatmulGetWorkspace", [handle, plan, workspace])
    s.call(b, "SpMMACompressedSize", [handle, plan, compressed, compressed_buffer])
    for pointer in (workspace, compressed, compressed_buffer):
        value = b.load(pointer, typ=e.i64)
        b.store(b.select(b.icmp_unsigned("==", value, ir.Constant(e.i64, 0)), ir.Constant(e.i64, 1), value), pointer)
    values = b.load(s.field(b, a, len(LT_SPARSE_SLOTS), 0), typ=e.ptr)
    prune_block, check_block, done = (fn.append_basic_block(n) for n in ("prune", "check", "done"))
    b.cbranch(b.icmp_unsigned("!=", prune, ir.Constant(e.i32, 0)), prune_block, done)
    b.position_at_end(prune_block)
    s.call(b, "SpMMAPrune", [handle, matmul, values, values, s.constant(lib.prune_strip), stream])
    b.cbranch(b.icmp_unsigned("==", prune, ir.Constant(e.i32, 2)), check_block, done)
    b.position_at_end(check_block)
    valid_device = e.call_with_out_pointer(b, "Malloc", [ir.Constant(e.i64, 4)])
    # Zeroed first: compute-sanitizer's initcheck on an H100 saw the check leave the flag unwritten.
    e.checked_call(b, "MemsetAsync", [valid_device, ir.Constant(e.i32, 0), ir.Constant(e.i64, 4), stream])
    s.call(b, "SpMMAPruneCheck", [handle, matmul, values, valid_device, stream])
    valid = b.alloca(e.i32)
    b.store(ir.Constant(e.i32, 0), valid)
    memcpy_default = ir.Constant(e.i32, e.runtime.memcpy_default)
    e.checked_call(b, "MemcpyAsync", [valid, valid_device, ir.Constant(e.i64, 4), memcpy_default, stream])
    e.checked_call(b, "StreamSynchronize", [stream])
    e.checked_call(b, "Free", [valid_device])
    invalid, checked = fn.append_basic_block("not_2to4"), fn.append_basic_block("checked")
    b.cbranch(b.icmp_unsigned("!=", b.load(valid, typ=e.i32), ir.Constant(e.i32, 0)), invalid, checked)
    b.position_at_end(invalid)
    dprintf = e.declare("dprintf", e.i32, [e.i32, e.ptr], var_arg=True)
    warning = "cusparseLtSpMMAPruneCheck: the matrix is not 2:4 after pruning: the product will be wrong\n"
    b.call(dprintf, [ir.Constant(e.i32, 2), e.cstring(warning)])
    b.branch(checked)
    b.position_at_end(checked)
    b.branch(done)
    b.position_at_end(done)
    b.ret_void()


def _lt_spmm(e):
    """mgpuCuSparseLtSpMM(A, B, C, workspace, compressed, compression buffer, stream): A compressed, then
    C = A B + C (alpha = beta = 1, as floats: cuSPARSELt's scalars) on the stream."""
    s = StructuredEmitter(e)
    ir = e.ir
    fn, b = _shim(e, "mgpuCuSparseLtSpMM", e.void, [e.ptr] * 7)
    a, bm, c, workspace, compressed, compressed_buffer, stream = fn.args
    handle = s.handle(b)
    plan = s.slot(b, a, 2)
    values = b.load(s.field(b, a, len(LT_SPARSE_SLOTS), 0), typ=e.ptr)
    s.call(b, "SpMMACompress", [handle, plan, values, compressed, compressed_buffer, stream])
    one = b.alloca(ir.FloatType())
    b.store(ir.Constant(ir.FloatType(), 1.0), one)
    streams = b.alloca(e.ptr)
    b.store(stream, streams)
    b_values = b.load(s.field(b, bm, 1, 0), typ=e.ptr)
    c_values = b.load(s.field(b, c, 1, 0), typ=e.ptr)
    s.call(
        b,
        "Matmul",
        [handle, plan, one, compressed, b_values, one, c_values, c_values, workspace, streams, ir.Constant(e.i32, 1)],
    )
    b.ret_void()


def _lt_destroy_sparse(e):
    s = StructuredEmitter(e)
    ir = e.ir
    fn, b = _shim(e, "mgpuDestroyCuSparseLtSpMat", e.void, [e.ptr, e.ptr])
    slot = fn.args[0]
    s.call(b, "MatDescriptorDestroy", [slot])
    planned = b.load(s.field(b, slot, len(LT_SPARSE_SLOTS), 1), typ=e.i64)
    destroy, done = fn.append_basic_block("planned"), fn.append_basic_block("done")
    b.cbranch(b.icmp_unsigned("!=", planned, ir.Constant(e.i64, 0)), destroy, done)
    b.position_at_end(destroy)
    s.call(b, "MatmulPlanDestroy", [s.slot(b, slot, 2)])
    s.call(b, "MatmulAlgSelectionDestroy", [s.slot(b, slot, 1)])
    b.branch(done)
    b.position_at_end(done)
    b.ret_void()


def _lt_destroy_dense(e):
    s = StructuredEmitter(e)
    fn, b = _shim(e, "mgpuDestroyCuSparseLtDnMat", e.void, [e.ptr, e.ptr])
    s.call(b, "MatDescriptorDestroy", [fn.args[0]])
    b.ret_void()


STRUCTURED_SHIMS = {
    "mgpuCreateSparseLtEnv": _lt_create_env,
    "mgpuDestroySparseLtEnv": _lt_destroy_env,
    "mgpuCusparseLtCreate2To4SpMat": _lt_create_2to4,
    "mgpuCreateCuSparseLtDnMat": _lt_create_dense,
    "mgpuCuSparseLtSpMMBufferSize": _lt_buffer_size,
    "mgpuCuSparseLtSpMM": _lt_spmm,
    "mgpuDestroyCuSparseLtSpMat": _lt_destroy_sparse,
    "mgpuDestroyCuSparseLtDnMat": _lt_destroy_dense,
}
