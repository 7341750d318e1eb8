"""Stage 1 of the device skeleton: each gpu.module lowered by MLIR (on a clone: the host step lowers the
same Program), its symbols renamed and checked, translated to LLVM IR text for the target's triple.

MLIR's Python modules are imported inside lower_to_llvm_ir: this module is imported with offload.device
by commands that never lower (ship, link's bundle reading), and `import mlir.ir` costs them 60 ms. A
dialect's Python module (mlir.dialects.X, hundreds of op classes: 5 to 15 ms of CPU each) is imported by
a rewrite only once it has found an op to rewrite: most programs need none of them here."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TypedDict

from offload.device.amd_wmma import lower_subgroup_mma_to_wmma, lowers_subgroup_mma
from offload.device.hip_assert import lower_device_asserts
from offload.device.images import LoweredModule, symbol_name
from offload.device.kinds import TargetKind, function_attributes
from offload.errors import Location, OffloadError
from offload.mlir.byte_elements import widen_narrow_element_accesses
from offload.mlir.frontend import Program, child_ops, location_of, run_mlir
from offload.mlir.walk import ops_where
from offload.mlir.wmma_workarounds import rewrite_unlowered_elementwise
from offload.options import CompileOptions, compile_option


@dataclass(frozen=True)
class LoweringMode:
    """What the lowering of one pipeline needs to know of its targets."""

    kind: TargetKind  # what differs between the vendors (kinds.py)
    triple: str
    subgroup_size: int = 32  # lanes of a warp/wavefront: the width of expanded subgroup reductions
    arch: str = ""  # the target's (one pipeline per AMD arch): gfx11 wave32 lowers gpu.subgroup_mma_* to WMMA


def lower_to_llvm_ir(
    program: Program, pipeline: str, options: CompileOptions, mode: LoweringMode
) -> list[LoweredModule]:
    """Each gpu.module lowered by `pipeline`, its symbols renamed (options.rename) and checked, and
    translated to LLVM IR for mode's triple; its kernels are the functions with mode's kernel attribute."""
    import mlir.ir as ir
    import mlir.passmanager as passmanager

    try:  # the translation alone, without mlir.dialects.llvm's 300 op classes (40 ms of start-up)
        from mlir._mlir_libs._mlirDialectsLLVM import translate_module_to_llvmir
    except ImportError:
        from mlir.dialects.llvm import translate_module_to_llvmir

    with program.context, ir.Location.unknown():
        # The program without its host code (cloning the gpu.modules one by one would import their
        # dialect's Python module for the op views clone returns).
        device = program.module.operation.clone()
        for op in child_ops(device.operation, ir):
            if op.name != "gpu.module":
                op.erase()
        if options.fast_math or not options.prec_div:
            _approximate_divisions(device, ir)
        _refuse_non_uniform_all_reduce(device, program.path, ir)
        _promote_printf_arguments(device, ir)
        _expand_subgroup_reductions(device, mode.subgroup_size, program.path, ir)
        _expand_subgroup_queries(device, mode.subgroup_size, ir)
        if mode.kind.expand_subgroup_broadcasts:
            _expand_subgroup_broadcasts(device, mode.subgroup_size, ir)
        if mode.kind.rewrite_mma_elementwise:
            rewrite_unlowered_elementwise(device, ir)
        if mode.kind.lower_device_asserts:
            lower_device_asserts(device, program.path, ir)
        if lowers_subgroup_mma(mode.arch, mode.subgroup_size):
            lower_subgroup_mma_to_wmma(device, program.path, ir)
        widen_narrow_element_accesses(device.operation)
        declared = _declared_functions(device, ir)
        manager = passmanager.PassManager.parse(pipeline)
        run_mlir(lambda: manager.run(device.operation), program.path, "cannot lower the device code")
        _keep_declared_names(device, declared, ir)
        if mode.kind.alloca_address_space:
            _allocas_in_address_space(device, mode.kind.alloca_address_space, ir)
        from offload.mlir.frontend import add_debug_info

        add_debug_info(device, options.device_debug_info, program.path)
        attributes = function_attributes(options)
        lowered: list[LoweredModule] = []
        defined_by: dict[str, tuple[str, Location]] = {}
        for gpu_module in child_ops(device.operation, ir):
            name = ir.StringAttr(gpu_module.attributes["sym_name"]).value
            ops = _symbol_ops(gpu_module, ir)
            symbols = _module_symbols(
                gpu_module, ops, name, program.path, mode.kind.kernel_attribute, options.rename, defined_by, ir
            )
            for op in ops:
                if op.name == "llvm.mlir.global" and _is_dynamic_shared_memory(op, ir):
                    op.attributes["linkage"] = ir.Attribute.parse("#llvm.linkage<external>")
                if attributes and op.name == "llvm.func" and len(op.regions[0].blocks) > 0:
                    _add_passthrough(op, attributes, ir)
            _check_fully_lowered(gpu_module, name, program.path, ir)
            gpu_module.attributes["llvm.target_triple"] = ir.StringAttr.get(mode.triple)
            if "llvm.data_layout" in gpu_module.attributes:  # the ROCDL lowering's spelling: the LLVM stages
                del gpu_module.attributes["llvm.data_layout"]  # give the target machine's
            text = run_mlir(
                functools.partial(translate_module_to_llvmir, gpu_module.operation),
                program.path,
                f"cannot translate gpu.module @{name} to LLVM IR",
            )
            lowered.append(LoweredModule(name, text, **symbols))
        return lowered


def _allocas_in_address_space(device, space: int, ir) -> None:
    """Every llvm.alloca of a generic pointer (memref.alloca's lowering) allocates in `space` and is cast
    to the generic pointer its users take, as clang emits them: the AMDGPU backend allows stack objects
    in the private address space only (the LLVM verifier refuses, an assertions build crashes, others)."""
    private, generic = ir.Type.parse(f"!llvm.ptr<{space}>"), ir.Type.parse("!llvm.ptr")
    found = ops_where(device.operation, lambda op: op.name == "llvm.alloca" and op.results[0].type == generic, ir)
    for op in found:
        attributes = {name: op.attributes[name] for name in op.attributes}
        with ir.InsertionPoint(op), op.location:
            allocated = ir.Operation.create(
                "llvm.alloca", results=[private], operands=list(op.operands), attributes=attributes
            ).result
            cast = ir.Operation.create("llvm.addrspacecast", results=[generic], operands=[allocated]).result
        op.results[0].replace_all_uses_with(cast)
        op.erase()


# The attribute the GPU conversions put on every func.func of a gpu.module, which turns a declaration
# @f into a body calling a declared @_mlir_ciface_f: an external device function would never link.
C_WRAPPER_ATTRIBUTE = "llvm.emit_c_interface"
C_WRAPPER_PREFIX = "_mlir_ciface_"


def _declared_functions(device, ir) -> dict[str, set[str]]:
    """gpu.module name -> the func.func declarations (no body) it holds, before lowering."""
    declared = {}
    for gpu_module in child_ops(device.operation, ir):
        name = ir.StringAttr(gpu_module.attributes["sym_name"]).value
        declared[name] = {
            ir.StringAttr(op.attributes["sym_name"]).value
            for op in child_ops(gpu_module, ir)
            if op.name == "func.func" and len(op.regions[0].blocks) == 0
        }
    return declared


def _keep_declared_names(device, declared: dict[str, set[str]], ir) -> None:
    """Each declared device function stays a declaration under its own name (as a CUDA or bitcode library
    defines it): the lowered wrapper body and its `_mlir_ciface_` declaration give way to a plain
    llvm.func declaration with the lowered signature."""
    for gpu_module in child_ops(device.operation, ir):
        names = declared.get(ir.StringAttr(gpu_module.attributes["sym_name"]).value)
        if not names:
            continue
        by_name = {
            ir.StringAttr(op.attributes["sym_name"]).value: op
            for op in child_ops(gpu_module, ir)
            if op.name == "llvm.func"
        }
        for name in sorted(names):
            wrapper, interface = by_name.get(name), by_name.get(C_WRAPPER_PREFIX + name)
            if wrapper is None or interface is None or C_WRAPPER_ATTRIBUTE not in wrapper.attributes:
                continue
            attributes = {
                key: wrapper.attributes[key]
                for key in wrapper.attributes
                if key not in (C_WRAPPER_ATTRIBUTE, "sym_visibility")
            }
            attributes["linkage"] = ir.Attribute.parse("#llvm.linkage<external>")  # defined elsewhere
            with ir.InsertionPoint(wrapper), wrapper.location:
                ir.Operation.create("llvm.func", attributes=attributes, regions=1)
            wrapper.erase()
            interface.erase()


_LOCAL_LINKAGES = ("#llvm.linkage<internal>", "#llvm.linkage<private>")
_DECLARATION_LINKAGES = ("#llvm.linkage<external>", "#llvm.linkage<extern_weak>")


def _symbol_ops(gpu_module, ir) -> list:
    """The llvm.func and llvm.mlir.global ops of a lowered gpu.module."""
    return [op for op in child_ops(gpu_module.operation, ir) if op.name in ("llvm.func", "llvm.mlir.global")]


class ModuleSymbols(TypedDict):
    """LoweredModule's symbol fields."""

    kernels: list[str]
    globals: list[str]
    exported: list[str]
    locations: dict[str, Location]


def _module_symbols(
    gpu_module,
    ops: list,
    module_name: str,
    path: str,
    kernel_attribute: str,
    rename: str | None,
    defined_by: dict[str, tuple[str, Location]],
    ir,
) -> ModuleSymbols:
    """Apply the rename scheme to the externally visible definitions among the gpu.module's symbol ops,
    then refuse a name that another gpu.module also defines (the RDC link would merge or reject them).
    Returns LoweredModule's symbol fields, names as in the image."""
    table = ir.SymbolTable(gpu_module.operation)
    symbols: ModuleSymbols = {"kernels": [], "globals": [], "exported": [], "locations": {}}
    exported = []
    for op in ops:
        symbol = ir.StringAttr(op.attributes["sym_name"]).value
        symbols["locations"][symbol] = location_of(op.location, path)
        # Compared as MLIR prints them: parsing the attributes would import mlir.dialects.llvm (40 ms).
        linkage = str(op.attributes["linkage"]) if "linkage" in op.attributes else None
        if op.name == "llvm.func":
            defined = len(op.regions[0].blocks) > 0
        else:  # a global without an initializer and with external linkage is a declaration
            defined = (
                "value" in op.attributes
                or len(op.regions[0].blocks) > 0
                or (linkage is not None and linkage not in _DECLARATION_LINKAGES)
            )
        if not defined:
            continue
        if linkage in _LOCAL_LINKAGES or symbol.startswith("llvm."):
            continue
        exported.append((op, symbol))
    for op, original in exported:
        new_name = symbol_name(module_name, original, rename)
        where = symbols["locations"][original]
        if new_name != original:
            if new_name in table:
                raise OffloadError(
                    f"renaming '{original}' in gpu.module @{module_name} gives '{new_name}', a name "
                    "the module already has: rename one of them",
                    where,
                )
            ir.SymbolTable.set_symbol_name(op, new_name)
            ir.SymbolTable.replace_all_symbol_uses(original, new_name, gpu_module.operation)
            symbols["locations"][new_name] = symbols["locations"].pop(original)
        if new_name in defined_by:
            first_module, first_where = defined_by[new_name]
            raise OffloadError(
                (
                    f"symbol '{new_name}' is defined by both gpu.module @{first_module} ({first_where}) and "
                    f"gpu.module @{module_name} ({where}); all gpu.modules go into one device image per target: "
                    "rename one, or pass ",
                    compile_option("rename", "module-prefix", joined=True),
                    " (names become <module>_<symbol>)",
                ),
                where,
            )
        defined_by[new_name] = (module_name, where)
        symbols["exported"].append(new_name)
        if op.name == "llvm.func" and kernel_attribute in op.attributes:
            symbols["kernels"].append(new_name)
        elif op.name == "llvm.mlir.global":
            symbols["globals"].append(new_name)
    return symbols


def _refuse_non_uniform_all_reduce(device, path: str, ir) -> None:
    """Upstream lowers only uniform gpu.all_reduce (frontend.mark_launch_reductions_uniform makes those in a
    launch's entry block uniform, as upstream's fold does); say so instead of 'failed to legalize'."""
    found = []

    def visit(op):
        if op.name == "gpu.all_reduce" and "uniform" not in op.attributes:
            found.append(op)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    device.operation.walk(visit)
    if found:
        raise OffloadError(
            "gpu.all_reduce is not uniform (it is under control flow, or in a gpu.func without the "
            "`uniform` keyword): the NVVM/ROCDL lowering, like upstream's, rewrites only reductions "
            "every thread of the block reaches; move it out of the branch or mark it `uniform`",
            location_of(found[0].location, path),
        )


TRANSLATABLE_DIALECTS = ("llvm.", "nvvm.", "rocdl.")


def _check_fully_lowered(gpu_module, name: str, path: str, ir) -> None:
    """Ops the lowering left behind (partial conversion) would crash MLIR's LLVM translation, taking
    the process with it: name the first one instead."""
    leftovers = []

    def visit(op):
        if op.name != "gpu.module" and not op.name.startswith(TRANSLATABLE_DIALECTS):
            leftovers.append(op)
            return ir.WalkResult.SKIP  # its body (e.g. linalg.yield) says nothing more
        return ir.WalkResult.ADVANCE

    gpu_module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    if not leftovers:
        return
    from offload.mlir.lowering_hints import leftover_error

    raise leftover_error(
        leftovers,
        lambda op: f"'{op}' in gpu.module @{name} cannot be lowered to device code (no NVVM/ROCDL lowering for it): ",
        path,
    )


def _is_dynamic_shared_memory(op, ir) -> bool:
    """A zero-sized workgroup array is dynamic shared memory. The lowering makes it internal, which
    NVPTX turns into a 1-byte static `.shared` variable overlapping the kernel's other shared memory;
    as an external declaration (clang's `extern __shared__ T x[]`) it is `.extern .shared x[]`."""
    if "addr_space" not in op.attributes or ir.IntegerAttr(op.attributes["addr_space"]).value != 3:
        return False
    value_type = ir.TypeAttr(op.attributes["global_type"]).value
    return "value" not in op.attributes and len(op.regions[0].blocks) == 0 and _is_empty_array(value_type)


def _is_empty_array(value_type) -> bool:
    # The Python bindings expose no LLVM array type class; the type's own syntax names its size.
    return str(value_type).startswith("!llvm.array<0 x")


def _approximate_divisions(device, ir) -> None:
    """--no-prec-div: f32 divisions may be approximate (afn/arcp, as clang's -fcuda-prec-div=false)."""
    from mlir.dialects import arith

    flags = ir.AttrBuilder.get("Arith_FastMathAttr")(
        arith.FastMathFlags.afn | arith.FastMathFlags.arcp, ir.Context.current
    )

    def mark(op):
        if op.name == "arith.divf":
            op.attributes["fastmath"] = flags
        return ir.WalkResult.ADVANCE

    device.operation.walk(mark)


def _promote_printf_arguments(device, ir) -> None:
    """gpu.printf integers narrower than 32 bits become i32 (i1 zero-, i8/i16 sign-extended), as C's
    default argument promotions make them: MLIR's vprintf lowering stores an i8 as one byte of the
    argument buffer, where %d reads four (the other three are uninitialized padding)."""
    i32 = ir.IntegerType.get_signless(32)
    found = ops_where(device.operation, lambda op: op.name == "gpu.printf", ir)
    if not found:
        return
    from mlir.dialects import arith  # only now: see the module docstring

    for op in found:
        for index, value in enumerate(list(op.operands)):
            narrow = value.type.maybe_downcast() if hasattr(value.type, "maybe_downcast") else value.type
            if not isinstance(narrow, ir.IntegerType) or narrow.width >= 32:
                continue
            with ir.InsertionPoint(op), op.location:
                promoted = (arith.ExtUIOp if narrow.width == 1 else arith.ExtSIOp)(i32, value).result
            op.operands[index] = promoted


# gpu.subgroup_reduce kind -> the arith op combining two values (integer, float).
SUBGROUP_COMBINE = {
    "add": ("addi", "addf"),
    "mul": ("muli", "mulf"),
    "and": ("andi", None),
    "or": ("ori", None),
    "xor": ("xori", None),
    "minsi": ("minsi", None),
    "minui": ("minui", None),
    "maxsi": ("maxsi", None),
    "maxui": ("maxui", None),
    "minnumf": (None, "minnumf"),
    "maxnumf": (None, "maxnumf"),
    "minimumf": (None, "minimumf"),
    "maximumf": (None, "maximumf"),
}


def _expand_subgroup_reductions(device, subgroup_size: int, path: str, ir) -> None:
    """gpu.subgroup_reduce, which MLIR 22's NVVM and ROCDL conversions do not lower, becomes a butterfly
    of `gpu.shuffle xor` over the subgroup (width `subgroup_size`): log2(cluster size) steps at offsets
    stride, 2*stride, ... (a cluster is `cluster_size` lanes `cluster_stride` apart; default: the whole
    subgroup), as upstream's expand-to-shuffles test pattern does. Every lane gets its cluster's result."""
    found = ops_where(device.operation, lambda op: op.name == "gpu.subgroup_reduce", ir)
    if not found:
        return
    from mlir.dialects import arith, gpu  # only now: see the module docstring

    i32 = ir.IntegerType.get_signless(32)
    for op in found:
        value = op.operands[0]
        kind = str(op.attributes["op"]).split()[-1].rstrip(">")
        scalar = value.type.maybe_downcast() if hasattr(value.type, "maybe_downcast") else value.type
        is_float = isinstance(scalar, (ir.F32Type, ir.F64Type))
        is_int = isinstance(scalar, ir.IntegerType) and scalar.width in (32, 64)
        combine = SUBGROUP_COMBINE.get(kind, (None, None))[1 if is_float else 0]
        size = ir.IntegerAttr(op.attributes["cluster_size"]).value if "cluster_size" in op.attributes else subgroup_size
        stride = ir.IntegerAttr(op.attributes["cluster_stride"]).value if "cluster_stride" in op.attributes else 1
        if not (is_float or is_int) or combine is None or size * stride > subgroup_size:
            raise OffloadError(
                f"gpu.subgroup_reduce {kind} of {value.type} over clusters of {size} lanes "
                f"{stride} apart cannot be expanded to shuffles on a {subgroup_size}-lane subgroup "
                "(supported: i32/i64/f32/f64 within the subgroup)",
                location_of(op.location, path),
            )
        with ir.InsertionPoint(op), op.location:
            width = arith.ConstantOp(i32, subgroup_size).result
            result, offset = value, stride
            while offset < size * stride:
                shift = arith.ConstantOp(i32, offset).result
                shuffled = gpu.ShuffleOp(result, shift, width, gpu.ShuffleMode.XOR).results[0]
                result = ir.Operation.create(
                    f"arith.{combine}", results=[value.type], operands=[result, shuffled]
                ).result
                offset *= 2
        op.results[0].replace_all_uses_with(result)
        op.erase()


SUBGROUP_QUERIES = ("gpu.subgroup_size", "gpu.subgroup_id", "gpu.num_subgroups")


def _expand_subgroup_queries(device, subgroup_size: int, ir) -> None:
    """gpu.subgroup_id and gpu.num_subgroups, which MLIR 22's NVVM and ROCDL conversions do not lower, and
    gpu.subgroup_size (not lowered to NVVM) become index arithmetic on the target's subgroup width (as
    upstream's subgroup-id rewrite does): the linear thread id (x fastest) / width, and the block's
    threads / width rounded up."""
    found = ops_where(device.operation, lambda op: op.name in SUBGROUP_QUERIES, ir)
    if not found:
        return
    from mlir.dialects import arith, gpu  # only now: see the module docstring

    index = ir.IndexType.get()
    for op in found:
        with ir.InsertionPoint(op), op.location:
            width = arith.ConstantOp(index, subgroup_size).result
            if op.name == "gpu.subgroup_size":
                result = width
            else:
                x, y, z = (gpu.BlockDimOp(gpu.Dimension(d)).result for d in range(3))
                xy = arith.MulIOp(x, y).result
                if op.name == "gpu.subgroup_id":
                    tx, ty, tz = (gpu.ThreadIdOp(gpu.Dimension(d)).result for d in range(3))
                    linear = arith.AddIOp(
                        arith.AddIOp(tx, arith.MulIOp(ty, x).result).result, arith.MulIOp(tz, xy).result
                    ).result
                    result = arith.DivUIOp(linear, width).result
                else:
                    result = arith.CeilDivUIOp(arith.MulIOp(xy, z).result, width).result
        op.results[0].replace_all_uses_with(result)
        op.erase()


def _expand_subgroup_broadcasts(device, subgroup_size: int, ir) -> None:
    """gpu.subgroup_broadcast, which MLIR 22's NVVM conversion does not lower (its ROCDL one does, with
    readlane/readfirstlane): specific_lane becomes `gpu.shuffle idx` over the warp from that lane;
    first_active_lane a `shfl.sync.idx` among the lanes of `activemask` from the lowest of them (32-bit
    values; wider ones through `gpu.shuffle`)."""
    found = ops_where(device.operation, lambda op: op.name == "gpu.subgroup_broadcast", ir)
    if not found:
        return
    from mlir.dialects import arith, gpu, llvm, nvvm  # only now: see the module docstring

    i1, i32 = ir.IntegerType.get_signless(1), ir.IntegerType.get_signless(32)
    for op in found:
        value = op.operands[0]
        with ir.InsertionPoint(op), op.location:
            width = arith.ConstantOp(i32, subgroup_size).result
            if len(op.operands) > 1:  # specific_lane %lane
                result = gpu.ShuffleOp(value, op.operands[1], width, gpu.ShuffleMode.IDX).results[0]
            else:
                active = llvm.CallIntrinsicOp(i32, ir.StringAttr.get("llvm.nvvm.activemask"), [], [], []).results[0]
                poison_at_zero = arith.ConstantOp(i1, 0).result
                lane = llvm.CallIntrinsicOp(
                    i32, ir.StringAttr.get("llvm.cttz.i32"), [active, poison_at_zero], [], []
                ).results[0]
                if isinstance(value.type, (ir.F32Type, ir.IntegerType)) and str(value.type) in ("i32", "f32"):
                    clamp = arith.ConstantOp(i32, subgroup_size - 1).result
                    result = nvvm.ShflOp(value.type, active, value, lane, clamp, nvvm.ShflKind.idx).result
                else:
                    result = gpu.ShuffleOp(value, lane, width, gpu.ShuffleMode.IDX).results[0]
        op.results[0].replace_all_uses_with(result)
        op.erase()


def _add_passthrough(op, attributes: list[tuple[str, str]], ir) -> None:
    existing = list(ir.ArrayAttr(op.attributes["passthrough"])) if "passthrough" in op.attributes else []
    pairs = [ir.ArrayAttr.get([ir.StringAttr.get(k), ir.StringAttr.get(v)]) for k, v in attributes]
    op.attributes["passthrough"] = ir.ArrayAttr.get(existing + pairs)
