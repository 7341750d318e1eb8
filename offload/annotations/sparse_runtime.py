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
CHECK_FUNCTION = "__mlir_offload_sparse.check"
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

# Ops the generated code does not provide yet, and why (refused at compile, at the op).
UNSUPPORTED_OPS = {
    "gpu.create_coo_aos": "cuSPARSE 12 removed the AoS COO format (cusparseCreateCooAoS): use gpu.create_coo",
    "gpu.create_2to4_spmat": "2:4 structured sparsity (cuSPARSELt; hipSPARSE has none) is not supported yet",
}


def sparse_library_for(offload_kind: str) -> SparseLibrary:
    library = SPARSE_LIBRARIES.get(offload_kind)
    if library is None:
        raise OffloadError(
            f"the gpu dialect's sparse operations need a sparse library; mlir-offload has none for the "
            f"{offload_kind} runtime (supported: {', '.join(sorted(SPARSE_LIBRARIES))})"
        )
    return library


def libraries_used(runtime_functions, offload_kind: str) -> tuple[str, ...]:
    """The -l names the host code's mgpu* functions need beyond the vendor runtime."""
    if any(name in SPARSE_SHIMS for name in runtime_functions):
        return (sparse_library_for(offload_kind).library,)
    return ()


class SparseEmitter:
    """The library's handle, checked calls and scalars, inside a runtime.RuntimeEmitter's module."""

    def __init__(self, e):
        self.e = e
        self.library = sparse_library_for(e.runtime.kind)

    def function(self, generic: str, args, ret=None):
        e = self.e
        return e.declare(self.library.prefix + generic, ret or e.i32, args)

    def check_function(self):
        """`void check(i32 status, ptr name)`: a nonzero status prints `name: error string` and exits 1."""
        e = self.e
        ir = e.ir
        existing = e.module.globals.get(CHECK_FUNCTION)
        if existing is not None:
            return existing
        fn = ir.Function(e.module, ir.FunctionType(e.void, [e.i32, e.ptr]), CHECK_FUNCTION)
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
        status = b.call(self.function("Destroy", [e.ptr]), [b.load(handle, typ=e.ptr)])
        failed, done = fn.append_basic_block("failed"), fn.append_basic_block("done")
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


SPARSE_SHIMS = {
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
