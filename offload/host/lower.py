"""Host lowering: a copy of the program's host part, lowered to the LLVM dialect and translated to LLVM IR.

Stages (each a function from one IR to the next):
  detach_device_code  gpu.module -> empty gpu.binary placeholder (the device step compiles gpu.modules;
                      the placeholder keeps gpu.launch_func verifiable without re-checking kernel types)
  lower_to_llvm       synchronous GPU ops become async ones on streams (tokens.py), then upstream
                      gpu-to-llvm turns host GPU ops into mgpu* calls (implemented by runtime.py, never by
                      libmlir_cuda_runtime) and leaves gpu.launch_func with LLVM-typed operands
  launches_to_calls   gpu.launch_func -> call of the launch function shared by the kernels of one argument
                      list, with the kernel's offload entry (launch.py defines both)
  translate           LLVM dialect -> LLVM IR text
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from offload.errors import OffloadError
from offload.mlir.byte_elements import widen_narrow_element_accesses

# Order follows upstream's gpu-lower-to-nvvm-pipeline host part; tokens.py first puts the synchronous
# forms of gpu.alloc/memcpy/memset/dealloc (rejected by gpu-to-llvm) on streams.
HOST_PIPELINE = (
    "builtin.module("
    "convert-vector-to-scf,"
    "lower-affine,"
    "convert-scf-to-cf,"
    "expand-strided-metadata,"
    "gpu-to-llvm,"
    "convert-math-to-llvm,"
    "convert-math-to-libm,"
    # Twice, as upstream's sparsifier: 1-D transfers lowered to masked loads ask memref.dim for their
    # bounds, which finalize-memref-to-llvm lowers only when it comes after.
    "convert-vector-to-llvm,"
    "finalize-memref-to-llvm,"
    "convert-vector-to-llvm,"
    "convert-arith-to-llvm,"
    "convert-index-to-llvm,"
    "convert-cf-to-llvm,"
    "convert-func-to-llvm,"
    "convert-ub-to-llvm,"
    "reconcile-unrealized-casts)"
)
# The async dialect, as upstream's GPU async programs lower it (the ref-counting passes run per function:
# async-to-async-runtime outlines the async.execute bodies into coroutines first).
ASYNC_PIPELINE = (
    "builtin.module(async-to-async-runtime,func.func(async-runtime-ref-counting,"
    "async-runtime-ref-counting-opt),convert-async-to-llvm)"
)
# After launches became func.calls: those (and their declarations) go to the LLVM dialect too.
CALLS_PIPELINE = "builtin.module(convert-func-to-llvm,reconcile-unrealized-casts)"

# Launch-config parameters every launch passes before the kernel's own arguments (see launch.py).
STUB_CONFIG_PARAMS = ("grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z", "shared_bytes", "stream")
PACKING_FUNCTION = "__mlir_offload_pack"


def packing_name(index: int) -> str:
    """The packing function of the index-th distinct kernel argument list (launch.packing_function): the program's
    launches call it with the kernel's offload entry, the launch configuration, then the kernel's arguments."""
    return f"{PACKING_FUNCTION}.{index}"


def clang_stub_name(kernel: str) -> str:
    """Host stub of a kernel as clang names and calls an extern "C" kernel's stub (`kernel<<<...>>>(args)` in
    a .cu file: the kernel's arguments only, the configuration pushed before the call); the kernel handle."""
    return f"__device_stub__{kernel}"


def cluster_stub_name(kernel: str) -> str:
    """Host stub of a kernel's `clusters in (...)` launches: cluster x/y/z, then the stub's parameters."""
    return f"__mlir_offload_cluster_stub.{kernel}"


@dataclass
class KernelLaunch:
    """What the host passes to one kernel: its LLVM argument types (memrefs already expanded)."""

    kernel: str
    gpu_module: str
    arg_types: list  # llvmlite.ir types, in kernel-argument order
    cluster_launch: object = None  # Location of the first `clusters in (...)` launch, if any


@dataclass
class LoweredHost:
    llvm_ir: str  # the host module as LLVM IR text (MLIR's translation), launch functions declared, not defined
    launches: dict[str, KernelLaunch] = field(default_factory=dict)  # kernel name -> launch signature
    packings: list[list] = field(default_factory=list)  # argument types of each packing_name(index) the host calls
    runtime_functions: list[str] = field(default_factory=list)  # mgpu* functions the host calls
    runner_utilities: list[str] = field(default_factory=list)  # MLIR runner utilities the host calls
    async_runtime: list[str] = field(default_factory=list)  # mlirAsyncRuntime* functions the host calls
    host_sites: list[str] = field(default_factory=list)  # locations of host GPU ops (host_sites.py; --sanitize)
    # The first function of MLIR's sparse tensor runtime the host calls ('' for none): the user links it.
    sparse_tensor_runtime: str = ""


def lower_host(
    program, device_symbol=lambda module, kernel: kernel, debug: bool = False, host_sites: bool = False
) -> LoweredHost:
    """The host part of `program` as LLVM IR; program.module itself is left untouched.
    `device_symbol(gpu module, kernel)` is the kernel's name in the device image (see --rename);
    `debug` (compile -g): the MLIR locations become the host code's debug information;
    `host_sites` (--sanitize): host GPU ops tell the emulator their locations (host_sites.py).
    Runs in a forked child: MLIR crashing on some input is one error line, not a dead process."""
    return start_lower_host(program, device_symbol, debug, host_sites).result()


def start_lower_host(
    program, device_symbol=lambda module, kernel: kernel, debug: bool = False, host_sites: bool = False
):
    """lower_host, started: a ForkedCall whose result() is the LoweredHost. The compile runs it while the
    device step runs (the host lowering needs no device image)."""
    from offload.processes import ForkedCall

    return ForkedCall(
        lambda _: _lower_host_here(program, device_symbol, debug, host_sites), None, "lowering the host code crashed"
    )


def _lower_host_here(program, device_symbol, debug: bool = False, host_sites: bool = False) -> LoweredHost:
    import mlir.ir as ir

    from offload.formats.sparse_tensor_runtime import first_runtime_function
    from offload.host.async_runtime import is_async_runtime_function
    from offload.host.entry import entry_point
    from offload.host.runner_utils import is_runner_utility
    from offload.mlir.frontend import run_mlir

    with program.context, ir.Location.unknown():
        host = program.module.operation.clone()
        detach_device_code(host, program.path, device_symbol)
        entry_point(host, program.path)
        sites = lower_to_llvm(host, program.path, host_sites)
        launches, packings = launches_to_calls(host, program.path, device_symbol)
        pm_run(CALLS_PIPELINE, host, program.path)
        remove_placeholders(host)
        check_fully_lowered(host, program.path)
        if debug:
            from offload.mlir.frontend import add_debug_info

            add_debug_info(host, "g", program.path, with_directory=True)
        declared = _function_names(host, declarations_only=True)
        runtime_functions = sorted(name for name in declared if name.startswith("mgpu"))
        runner_utilities = sorted(name for name in declared if is_runner_utility(name))
        async_runtime = sorted(name for name in declared if is_async_runtime_function(name))
        from mlir.dialects import llvm as llvm_dialect

        llvm_ir = run_mlir(
            lambda: llvm_dialect.translate_module_to_llvmir(host.operation),
            program.path,
            "translating the host module to LLVM IR",
        )
        host.erase()
    return LoweredHost(
        llvm_ir=str(llvm_ir),
        launches=launches,
        packings=packings,
        runtime_functions=runtime_functions,
        runner_utilities=runner_utilities,
        sparse_tensor_runtime=first_runtime_function(declared),
        async_runtime=async_runtime,
        host_sites=sites,
    )


def detach_device_code(host, path: str, device_symbol=lambda module, kernel: kernel) -> dict[str, str]:
    """Replace every gpu.module by an empty gpu.binary of the same name; returns kernel -> gpu.module.

    Two gpu.modules with a kernel of the same name would give two device symbols of one name:
    an error here, at the second kernel."""
    import mlir.ir as ir
    from mlir.dialects import gpu

    from offload.mlir.frontend import location_of

    placeholder_object = ir.Attribute.parse('#gpu.object<#nvvm.target, "">')
    placeholder_handler = ir.Attribute.parse("#gpu.select_object<0>")
    kernel_modules: dict[str, str] = {}
    for op in list(host.regions[0].blocks[0].operations):
        if op.operation.name != "gpu.module":
            continue
        module_name = ir.StringAttr(op.attributes["sym_name"]).value
        for inner in op.regions[0].blocks[0].operations:
            if inner.operation.name != "gpu.func" or "gpu.kernel" not in inner.attributes:
                continue
            kernel = device_symbol(module_name, ir.StringAttr(inner.attributes["sym_name"]).value)
            if kernel in kernel_modules and kernel_modules[kernel] != module_name:
                raise OffloadError(
                    f"kernel name collision: '{kernel}' is defined in gpu.module @{kernel_modules[kernel]} "
                    f"and @{module_name}; device images name kernels without their module, rename one",
                    location_of(inner.location, path),
                )
            kernel_modules[kernel] = module_name
        with ir.InsertionPoint(op), op.location:
            gpu.BinaryOp(module_name, ir.ArrayAttr.get([placeholder_object]), offloadingHandler=placeholder_handler)
        op.operation.erase()
    return kernel_modules


def lower_to_llvm(host, path: str, host_sites: bool = False) -> list[str]:
    """Lowers `host` in place; returns the locations of its host GPU ops where `host_sites` (else none)."""
    reject_unranked_memref_arguments(host, path)
    reject_unsupported_sparse_ops(host, path)
    from offload.host.tokens import join_and_fork, synchronous_ops_on_streams

    synchronous_ops_on_streams(host)
    join_and_fork(host, path)
    host_shared_allocs_synchronous(host)
    lower_async_dialect(host, path)
    widen_narrow_element_accesses(host)
    sites = []
    if host_sites:
        from offload.host.host_sites import tag_host_operations

        sites = tag_host_operations(host, path)
    pm_run(HOST_PIPELINE, host, path, "lowering the host code")
    # Upstream lowers the async-token ops to streams; what is left of the gpu dialect must be launches.
    others = _find_ops(host, lambda name: name.startswith("gpu.") and name not in ("gpu.launch_func", "gpu.binary"))
    if others:
        from offload.mlir.frontend import location_of

        raise OffloadError(
            f"host operation '{others[0].operation.name}' is not supported", location_of(others[0].location, path)
        )
    return sites


def reject_unsupported_sparse_ops(host, path: str) -> None:
    """The sparse ops the generated library calls do not cover: one located line naming why."""
    from offload.host.sparse_runtime import UNSUPPORTED_OPS

    found = _find_ops(host, lambda name: name in UNSUPPORTED_OPS)
    if found:
        from offload.mlir.frontend import location_of

        name = found[0].operation.name
        raise OffloadError(f"'{name}': {UNSUPPORTED_OPS[name]}", location_of(found[0].location, path))


def lower_async_dialect(host, path: str) -> None:
    """async.execute/await/groups become coroutines calling MLIR's async runtime (mlirAsyncRuntime*), as
    upstream's async lowering does; async_runtime.py defines those functions in the bundle. The GPU ops
    inside the bodies were put on streams first (tokens.py), so each body waits for its GPU work."""
    if _find_ops(host, lambda name: name.startswith("async.")):
        pm_run(ASYNC_PIPELINE, host, path, "lowering the async dialect")


def check_fully_lowered(host, path: str) -> None:
    """Ops the host lowering left behind (linalg, tensor, vector, ...) would crash MLIR's translation to
    LLVM IR: name the first one instead. A conversion cast only marks where such an op's value flows."""
    leftovers = _find_ops(host, lambda name: not name.startswith("llvm.") and name != "builtin.module")
    if not leftovers:
        return
    from offload.mlir.lowering_hints import leftover_error

    raise leftover_error(
        leftovers,
        lambda op: (
            f"host operation '{op}' cannot be lowered by mlir-offload's host lowering "
            "(func, scf, cf, affine, arith, math, index, memref, vector and gpu host ops): "
        ),
        path,
    )


def _find_ops(host, matches) -> list:
    """The ops whose name `matches`, outermost first (the body of a found op is not searched)."""
    import mlir.ir as ir

    found = []  # collected, not raised: an exception inside the walk callback becomes a RuntimeError

    def visit(op):
        if matches(op.name):
            found.append(op)
            return ir.WalkResult.SKIP
        return ir.WalkResult.ADVANCE

    host.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def reject_unranked_memref_arguments(host, path: str) -> None:
    """gpu-to-llvm passes an unranked memref as (rank, pointer to a descriptor on the host stack): the
    kernel would read host memory. Refuse it at the launch instead of failing on the GPU."""
    import mlir.ir as ir

    from offload.mlir.frontend import location_of

    found: list[tuple[Any, Any]] = []  # an exception raised inside the walk callback would reach us as a RuntimeError

    def check(op):
        if op.operation.name == "gpu.launch_func":
            found.extend(
                (op, operand.type)
                for operand in op.operation.operands
                if isinstance(operand.type.maybe_downcast(), ir.UnrankedMemRefType)
            )
        return _walk_advance()

    host.walk(check)
    if found:
        op, unranked = found[0]
        raise OffloadError(
            f"gpu.launch_func passes an unranked {unranked}, whose descriptor would stay in "
            "host memory: memref.cast it to a ranked memref before the launch",
            location_of(op.location, path),
        )


def host_shared_allocs_synchronous(host) -> None:
    """`gpu.alloc async [%t] host_shared` is rejected by gpu-to-llvm: such an
    allocation (managed memory) needs no stream order, so it becomes synchronous again and its token
    is replaced by its dependency."""
    import mlir.ir as ir
    from mlir.dialects import gpu

    found = []

    def collect(op):
        if op.operation.name == "gpu.alloc" and "hostShared" in op.attributes:
            view = op.operation.opview
            if view.asyncToken is not None and len(view.asyncDependencies) == 1:
                found.append(view)
        return _walk_advance()

    host.walk(collect)
    for alloc in found:
        with ir.InsertionPoint(alloc.operation), alloc.location:
            replacement = gpu.AllocOp(
                alloc.memref.type, None, [], list(alloc.dynamicSizes), list(alloc.symbolOperands), hostShared=True
            )
        alloc.memref.replace_all_uses_with(replacement.memref)
        alloc.asyncToken.replace_all_uses_with(alloc.asyncDependencies[0])
        alloc.operation.erase()


def launches_to_calls(host, path: str, device_symbol) -> tuple[dict[str, KernelLaunch], list[list]]:
    """Each gpu.launch_func becomes `func.call @__mlir_offload_pack.N(kernel entry, grid, block, shared bytes,
    stream, args)`: N numbers the distinct kernel argument lists in order of first launch, the entry is the
    kernel's `.offloading.entry.K` (declared here, defined with the stubs; launch.py reads the kernel handle
    and name from it). No function per kernel: the host compile at link pays for one call per launch.
    A `clusters in (...)` launch calls the kernel's cluster stub instead. Returns the launch signatures and the
    argument types of each packing function, in N order.

    Every launch has a stream by now: tokens.py put the synchronous ones on streams, with their waits."""
    import mlir.ir as ir
    from mlir.dialects import func, llvm

    from offload.host.entries import entry_symbol
    from offload.mlir.frontend import location_of

    launch_ops = []

    def collect(op):
        if op.operation.name == "gpu.launch_func":
            launch_ops.append(op.operation.opview)
        return _walk_advance()

    host.walk(collect)
    i64 = ir.IntegerType.get_signless(64)
    i32 = ir.IntegerType.get_signless(32)
    i8 = ir.IntegerType.get_signless(8)
    ptr = llvm.PointerType.get()
    external = ir.Attribute.parse("#llvm.linkage<external>")
    launches: dict[str, KernelLaunch] = {}
    packings: dict[tuple[str, ...], int] = {}  # kernel argument types -> N of __mlir_offload_pack.N
    packing_types: list[list] = []
    declared: set[str] = set()
    module_body = host.regions[0].blocks[0]
    program_symbols = {
        ir.StringAttr(op.attributes["sym_name"]).value for op in module_body.operations if "sym_name" in op.attributes
    }
    operand_types: dict[str, list] = {}  # kernel -> the MLIR types of its first launch's arguments
    for launch in launch_ops:
        module_name = _root_symbol(launch.kernel)
        kernel = device_symbol(module_name, _leaf_symbol(launch.kernel))
        kernel_args = list(launch.kernelOperands)
        previous = launches.get(kernel)
        if previous is None:
            location = location_of(launch.location, path)
            previous = launches[kernel] = KernelLaunch(
                kernel, module_name, [_llvmlite_type(a.type, kernel, location) for a in kernel_args]
            )
            operand_types[kernel] = [a.type for a in kernel_args]
            _refuse_taken_name(clang_stub_name(kernel), kernel, program_symbols, location)
        elif operand_types[kernel] != [a.type for a in kernel_args]:
            location = location_of(launch.location, path)
            arg_types = [_llvmlite_type(a.type, kernel, location) for a in kernel_args]
            if [str(t) for t in previous.arg_types] != [str(t) for t in arg_types]:
                raise OffloadError(
                    f"kernel '{kernel}' is launched with different argument types "
                    f"({', '.join(map(str, previous.arg_types))} before, "
                    f"{', '.join(map(str, arg_types))} here)",
                    location,
                )
        clustered = launch.clusterSizeX is not None
        if clustered and previous.cluster_launch is None:
            previous.cluster_launch = location_of(launch.location, path)
        with ir.InsertionPoint(launch.operation), launch.location:
            clusters = [launch.clusterSizeX, launch.clusterSizeY, launch.clusterSizeZ] if clustered else []
            dims = (
                launch.gridSizeX,
                launch.gridSizeY,
                launch.gridSizeZ,
                launch.blockSizeX,
                launch.blockSizeY,
                launch.blockSizeZ,
            )
            config = [_as_i64(v, i64) for v in (*clusters, *dims)]
            shared = launch.dynamicSharedMemorySize
            if shared is None:
                shared = llvm.ConstantOp(i32, ir.IntegerAttr.get(i32, 0)).result
            stream = launch.asyncObject
            if stream is None:  # tokens.synchronous_ops_on_streams put every launch on a stream
                raise OffloadError(
                    f"internal error: launch of '{kernel}' has no stream after the async lowering",
                    location_of(launch.location, path),
                )
            if clustered:
                name, leading = cluster_stub_name(kernel), []
            else:
                key = tuple(str(t) for t in previous.arg_types)
                if key not in packings:
                    packings[key] = len(packings)
                    packing_types.append(previous.arg_types)
                name = packing_name(packings[key])
                entry = entry_symbol(kernel)
                if entry not in declared:
                    where = location_of(launch.location, path)
                    _refuse_taken_name(entry, kernel, program_symbols, where, "the offload entry of")
                    with ir.InsertionPoint(module_body):
                        llvm.GlobalOp(i8, entry, external, constant=True)
                    declared.add(entry)
                leading = [llvm.AddressOfOp(ptr, entry).result]
            operands = leading + config + [shared, stream] + kernel_args
            if name not in declared:
                where = location_of(launch.location, path)
                what = "the host stub that launches" if clustered else "the launch code shared by"
                _refuse_taken_name(name, kernel, program_symbols, where, what)
                with ir.InsertionPoint(module_body):
                    func.FuncOp(name, ir.FunctionType.get([o.type for o in operands], []), visibility="private")
                declared.add(name)
            func.CallOp([], ir.FlatSymbolRefAttr.get(name), operands)
        launch.operation.erase()
    return launches, packing_types


def _refuse_taken_name(
    name: str, kernel: str, program_symbols: set[str], location, what: str = "the host stub that launches"
) -> None:
    """A symbol the host code of `kernel` adds (a stub, the shared launch code, the offload entry) may not be
    one the program defines already."""
    if name in program_symbols:
        raise OffloadError(
            f"the program defines '{name}', the name of {what} kernel '{kernel}': rename the program's function",
            location,
        )


def remove_placeholders(host) -> None:
    for op in list(host.regions[0].blocks[0].operations):
        if op.operation.name == "gpu.binary":
            op.operation.erase()
    if "gpu.container_module" in host.attributes:
        del host.attributes["gpu.container_module"]


def pm_run(pipeline: str, op, path: str, what: str = "") -> None:
    import mlir.passmanager as passmanager

    from offload.mlir.frontend import run_mlir

    manager = passmanager.PassManager.parse(pipeline)
    run_mlir(lambda: manager.run(op), path, what)


def _function_names(host, declarations_only: bool) -> list[str]:
    import mlir.ir as ir

    names = []
    for op in host.regions[0].blocks[0].operations:
        if op.operation.name == "llvm.func":
            if declarations_only and len(op.regions[0].blocks) > 0:
                continue
            names.append(ir.StringAttr(op.attributes["sym_name"]).value)
    return names


def _root_symbol(attr) -> str:
    import mlir.ir as ir

    return ir.SymbolRefAttr(attr).value[0]


def _leaf_symbol(attr) -> str:
    import mlir.ir as ir

    return ir.SymbolRefAttr(attr).value[-1]


def _as_i64(value, i64):
    """Launch dimensions arrive as i64 after lowering (index); anything narrower is widened."""
    from mlir.dialects import llvm

    if value.type == i64:
        return value
    return llvm.ZExtOp(i64, value).result


def _llvmlite_type(mlir_type, kernel: str, location):
    """The llvmlite.ir type of one LLVM-dialect kernel operand."""
    import llvmlite.ir as lir
    import mlir.ir as ir
    from mlir.dialects import llvm

    t = mlir_type.maybe_downcast()
    if isinstance(t, ir.IntegerType):
        return lir.IntType(t.width)
    if isinstance(t, ir.F32Type):
        return lir.FloatType()
    if isinstance(t, ir.F64Type):
        return lir.DoubleType()
    if isinstance(t, ir.F16Type):
        return lir.HalfType()
    if isinstance(t, llvm.PointerType):
        return lir.PointerType(addrspace=t.address_space or 0)
    if isinstance(t, ir.VectorType) and t.rank == 1 and t.has_static_shape:
        return lir.VectorType(_llvmlite_type(t.element_type, kernel, location), t.shape[0])
    raise OffloadError(
        f"kernel '{kernel}' takes an argument of type {mlir_type}, which the host stub "
        "cannot pass (supported: integers, f16/f32/f64, pointers, 1-D vectors)",
        location,
    )


def _walk_advance():
    import mlir.ir as ir

    return ir.WalkResult.ADVANCE
