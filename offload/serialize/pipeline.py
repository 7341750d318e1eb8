"""The one serialization skeleton (modelled on MLIR's ModuleToObject), as named stages:

    lower (MLIR, per gpu.module) -> translate (LLVM IR) -> parse (llvmlite) -> rename/check symbols
    -> link gpu.modules -> link user bitcode -> link device libraries -> internalize -> optimize
    -> check unresolved calls -> emit bitcode

All gpu.modules of the program go into ONE image per target (clang's RDC model). What differs between
NVVM and ROCDL comes from the TargetKind record in kinds.py."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from offload.errors import Location, OffloadError
from offload.compiler.byte_elements import widen_narrow_element_accesses
from offload.compiler.frontend import Program, child_ops, location_of, run_mlir
from offload.serialize.kinds import KINDS, TargetKind, function_attributes
from offload.serialize.libraries import LIBRARY_FIX, bitcode_bytes, is_bitcode
from offload.serialize.processes import ForkedCall, map_forked, map_threads, worker_count
from offload.formats.targets import Target, check_ptx_feature
from offload.formats.vendors import vendor_for
from offload.options import DEFAULT_OPT_LEVEL, PREFIX_SCHEME, CompileOptions, check_rename

@dataclass
class DeviceImage:
    target: Target
    bitcode: bytes
    kernels: list[str]
    globals: list[str]
    native: object = None  # offload.compiler.native.NativeCode, set by compile's codegen stage when packaged native
    cached: bool = False  # the bitcode came from the cache: LLVM parses it only in a child (in_child_if_cached)


@dataclass
class LoweredModule:
    """One gpu.module after MLIR lowering: its LLVM IR text and its symbols, named as in the image (the
    rename scheme applied): kernels, externally visible global variables and functions, and where
    each definition came from."""

    name: str
    llvm_ir: str
    kernels: list[str]
    locations: dict[str, Location]
    globals: list[str] = field(default_factory=list)
    exported: list[str] = field(default_factory=list)  # kernels, functions and globals other modules see


def symbol_name(module_name: str, symbol: str, rename: str | None) -> str:
    """The name a gpu.module's symbol has in the device image (and so in the host's offload entries).
    --rename=module-prefix makes it `<module>_<symbol>`, --rename=prefix:NAME (--symbol-prefix NAME)
    `NAME_<symbol>`; without renaming it is the symbol itself."""
    if rename is None:
        return symbol
    check_rename(rename)
    if rename == "module-prefix":
        return f"{module_name}_{symbol}"
    return f"{rename[len(PREFIX_SCHEME):]}_{symbol}"


def compile_device(program: Program, targets: list[Target], options: CompileOptions,
                   *, jobs: int | None = None, lto_pre_link: bool = False, codegen=None) -> list[DeviceImage]:
    """Every gpu.module of `program`, for every target: one LLVM bitcode image per target. The MLIR
    lowering runs in a forked child (once per distinct pipeline); the LLVM stages of the targets run side
    by side, up to `jobs` at once (default: one per CPU): LLVM's tools as processes where the machine has
    them, else llvmlite in forked children, each in its own LLVM context. So an image is the same whichever
    other targets were asked for and however many jobs ran.
    lto_pre_link: the images stay bitcode the target clang LTO-links (optimizer.py says why it matters).
    codegen: gives each image built its native code (offload.compiler.native.Codegen); what that code depends
    on joins the image's cache key, so that a cache hit brings its native code along."""
    from offload.serialize.optimizer import in_process_optimizer

    _check_options(options, targets)
    program.require_gpu_modules()
    pipelines = [KINDS[target.offload_kind].lowering_pipeline(target) for target in targets]
    distinct = list(dict.fromkeys(pipelines))  # sm_80 and sm_90 share one NVVM lowering
    modes = {p: LoweringMode(KINDS[t.offload_kind].kernel_attribute, t.triple, t.wavefront_size)
             for p, t in zip(pipelines, targets)}
    # In a child: MLIR crashing on some input (e.g. translating an NVVM op it cannot) is one error line.
    lowering = ForkedCall(lambda names: [lower_to_llvm_ir(program, p, options, modes[p]) for p in names],
                          distinct, "lowering the device code crashed")
    # While the child lowers: which LLVM runs the LLVM stages. llvmlite checks the triple of each
    # --link-bitcode library as it parses it.
    optimizer = in_process_optimizer() if options.link_bitcode else \
        _llvm_tools_ready(tuple(dict.fromkeys(t.triple for t in targets)))
    cache = _open_cache(options)  # also while the child lowers (the redis client takes 100 ms to import)
    if cache and codegen:
        for target in targets:
            codegen.key(target)  # ptxas --version, while the child lowers
    if optimizer.in_process and jobs is None and options.opt_level == 0:
        jobs = 1  # without the optimizer a target's LLVM stages cost less than forking a child
    # A thread loading LLVM must not be running when a child is forked.
    preload = _preload_llvm() if optimizer.in_process and worker_count(len(targets), jobs) > 1 else None
    lowered_by_pipeline = dict(zip(distinct, lowering.result()))
    work = [SerializeJob(lowered_by_pipeline[pipeline], target, options, program.path, optimizer, lto_pre_link)
            for pipeline, target in zip(pipelines, targets)]
    keys = [_cache_key(job, codegen) for job in work] if cache else [None] * len(work)
    images = cache.lookup(keys, targets, native=codegen is not None) if cache else [None] * len(work)
    missing = [i for i, image in enumerate(images) if image is None]
    if preload is not None:
        preload.join()  # no other thread may run when the children are forked
    if optimizer.in_process:
        # LLVM parses the files the user names (--link-bitcode, --libdevice, --rocm-device-lib-path): never in
        # this process, whatever they hold.
        built = map_forked(serialize_job, [work[i] for i in missing], [targets[i].arch for i in missing], jobs,
                           isolate=bool(options.link_bitcode or options.libdevice or options.rocm_device_lib_path))
    else:
        built = map_threads(serialize_with_tools, [work[i] for i in missing], jobs)
    if codegen is not None and built:
        from offload.compiler.trace import stage

        with stage("codegen"):
            built = [codegen(image) for image in built]
    for i, image in zip(missing, built):
        images[i] = image
    if cache:
        cache.store({keys[i]: images[i] for i in missing})
    return images


def _llvm_tools_ready(triples: tuple[str, ...]):
    """find_optimizer, and llvmlite.ir imported (the module flags module needs it, 40 ms) while the child lowers."""
    from offload.serialize.optimizer import find_optimizer

    optimizer = find_optimizer(triples)
    if not optimizer.in_process:
        import llvmlite.ir  # noqa: F401
    return optimizer


@dataclass(frozen=True)
class LoweringMode:
    """What the lowering of one pipeline needs to know of its targets."""

    kernel_attribute: str  # the target kind's (kinds.py)
    triple: str
    subgroup_size: int = 32  # lanes of a warp/wavefront: the width of expanded subgroup reductions


def _open_cache(options: CompileOptions):
    if not options.cache:
        return None
    from offload.serialize.cache import open_cache

    return open_cache(options)


def _cache_key(job: SerializeJob, codegen=None) -> str:
    from offload.serialize.cache import image_key, with_codegen

    kind = KINDS[job.target.offload_kind]
    try:  # every library the image may link: the plan as if the code called into them
        libraries = list(kind.plan_libraries(job.target, job.options, True).files)
    except OffloadError:
        libraries = []  # none found: serialization reports it if the code needs one
    key = image_key(job, [*job.options.link_bitcode, *libraries])
    return with_codegen(key, codegen.key(job.target)) if codegen else key


def _preload_llvm() -> threading.Thread:
    """Load and initialize llvmlite's LLVM in this process while MLIR lowers (the library load waits
    on the disk and the dynamic linker, not on the GIL): forked children inherit it instead of each
    loading the 180 MB library again."""

    def load():
        try:
            import llvmlite.binding as llvm

            llvm.initialize_all_targets()
            llvm.initialize_all_asmprinters()
        except Exception:  # noqa: BLE001 - the children load it again and report what fails
            pass

    thread = threading.Thread(target=load, name="llvmlite-preload", daemon=True)
    thread.start()
    return thread


@dataclass(frozen=True)
class SerializeJob:
    """What the LLVM stages of one target need: plain data, so that a forked child can run them."""

    lowered: list[LoweredModule]
    target: Target
    options: CompileOptions
    path: str
    optimizer: object  # offload.serialize.optimizer.Optimizer
    lto_pre_link: bool = False


def serialize_job(job: SerializeJob) -> DeviceImage:
    """The LLVM stages of one target in llvmlite (in a forked child: see compile_device)."""
    import llvmlite.binding as llvm

    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    # A fresh LLVM context per image: named struct types never pick up suffixes from other images.
    return serialize(job.lowered, job.target, KINDS[job.target.offload_kind], job.options, job.path,
                     fresh_context(), job.lto_pre_link)


def serialize_with_tools(job: SerializeJob) -> DeviceImage:
    """The LLVM stages of one target through LLVM's tools (llvm_tools.py)."""
    from offload.serialize.llvm_tools import link_and_optimize
    from offload.packager.bitcode_ident import bitcode_module

    kind = KINDS[job.target.offload_kind]
    kernels, user_globals, exported = image_symbols(job.lowered)
    bitcode = link_and_optimize(job.lowered, job.target, kind, job.options, job.optimizer, job.lto_pre_link,
                                kernels + user_globals)
    module = bitcode_module(bitcode)
    if module is None or not _same_layout(module.data_layout, job.optimizer.data_layout(job.target.triple)):
        raise OffloadError(f"internal error: {job.optimizer.path} wrote a {job.target.arch} image our bitcode "
                           "reader cannot read, or with another data layout than the target's")
    declared = [f.name for f in module.functions if f.is_declaration]
    check_unresolved(declared, lambda: _bitcode_call_graph(bitcode), kind, job.target, kernels, exported,
                     job.options.gpu_rdc)
    return DeviceImage(target=job.target, bitcode=bitcode, kernels=kernels, globals=user_globals)


def _same_layout(found: str, expected: str) -> bool:
    """Data layouts as sets of specifications: reading AMDGPU bitcode, LLVM moves m:e to the front."""
    return sorted(found.split("-")) == sorted(expected.split("-"))


def image_symbols(lowered: list[LoweredModule]) -> tuple[list[str], list[str], dict[str, Location]]:
    """(kernels, externally visible globals, exported name -> Location) of all gpu.modules of an image."""
    kernels = [k for m in lowered for k in m.kernels]
    user_globals = [g for m in lowered for g in m.globals]
    exported = {name: m.locations[name] for m in lowered for name in m.exported}
    return kernels, user_globals, exported


def _check_options(options: CompileOptions, targets: list[Target]) -> None:
    if not targets:
        raise OffloadError("no offload target: pass --offload-arch, e.g. sm_80 or gfx90a")
    for target in targets:
        if target.offload_kind not in KINDS:
            raise OffloadError(f"unknown offload kind '{target.offload_kind}' (valid: cuda, hip)")
        if vendor_for(target.offload_kind).ptx:
            check_ptx_feature(target)


# --- stage 1: MLIR lowering (on a clone: the host step lowers the same Program) -------------------

def lower_to_llvm_ir(program: Program, pipeline: str, options: CompileOptions,
                     mode: LoweringMode) -> list[LoweredModule]:
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
        widen_narrow_element_accesses(device.operation)
        declared = _declared_functions(device, ir)
        manager = passmanager.PassManager.parse(pipeline)
        run_mlir(lambda: manager.run(device.operation), program.path, "cannot lower the device code")
        _keep_declared_names(device, declared, ir)
        from offload.compiler.frontend import add_debug_info

        add_debug_info(device, options.debug_info and "lineinfo", program.path)
        attributes = function_attributes(options)
        lowered, defined_by = [], {}
        for gpu_module in child_ops(device.operation, ir):
            name = ir.StringAttr(gpu_module.attributes["sym_name"]).value
            ops = _symbol_ops(gpu_module, ir)
            symbols = _module_symbols(gpu_module, ops, name, program.path, mode.kernel_attribute, options.rename,
                                      defined_by, ir)
            for op in ops:
                if op.name == "llvm.mlir.global" and _is_dynamic_shared_memory(op, ir):
                    op.attributes["linkage"] = ir.Attribute.parse("#llvm.linkage<external>")
                if attributes and op.name == "llvm.func" and len(op.regions[0].blocks) > 0:
                    _add_passthrough(op, attributes, ir)
            _check_fully_lowered(gpu_module, name, program.path, ir)
            gpu_module.attributes["llvm.target_triple"] = ir.StringAttr.get(mode.triple)
            if "llvm.data_layout" in gpu_module.attributes:  # the ROCDL lowering's spelling: the LLVM stages
                del gpu_module.attributes["llvm.data_layout"]  # give the target machine's
            text = run_mlir(lambda: translate_module_to_llvmir(gpu_module.operation),
                            program.path, f"cannot translate gpu.module @{name} to LLVM IR")
            lowered.append(LoweredModule(name, text, **symbols))
        return lowered


# The attribute the GPU conversions put on every func.func of a gpu.module, which turns a declaration
# @f into a body calling a declared @_mlir_ciface_f: an external device function would never link.
C_WRAPPER_ATTRIBUTE = "llvm.emit_c_interface"
C_WRAPPER_PREFIX = "_mlir_ciface_"


def _declared_functions(device, ir) -> dict[str, set[str]]:
    """gpu.module name -> the func.func declarations (no body) it holds, before lowering."""
    declared = {}
    for gpu_module in child_ops(device.operation, ir):
        name = ir.StringAttr(gpu_module.attributes["sym_name"]).value
        declared[name] = {ir.StringAttr(op.attributes["sym_name"]).value for op in child_ops(gpu_module, ir)
                          if op.name == "func.func" and len(op.regions[0].blocks) == 0}
    return declared


def _keep_declared_names(device, declared: dict[str, set[str]], ir) -> None:
    """Each declared device function stays a declaration under its own name (as a CUDA or bitcode library
    defines it): the lowered wrapper body and its `_mlir_ciface_` declaration give way to a plain
    llvm.func declaration with the lowered signature."""
    for gpu_module in child_ops(device.operation, ir):
        names = declared.get(ir.StringAttr(gpu_module.attributes["sym_name"]).value)
        if not names:
            continue
        by_name = {ir.StringAttr(op.attributes["sym_name"]).value: op for op in child_ops(gpu_module, ir)
                   if op.name == "llvm.func"}
        for name in sorted(names):
            wrapper, interface = by_name.get(name), by_name.get(C_WRAPPER_PREFIX + name)
            if wrapper is None or interface is None or C_WRAPPER_ATTRIBUTE not in wrapper.attributes:
                continue
            attributes = {key: wrapper.attributes[key] for key in wrapper.attributes
                          if key not in (C_WRAPPER_ATTRIBUTE, "sym_visibility")}
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


def _module_symbols(gpu_module, ops: list, module_name: str, path: str, kernel_attribute: str, rename: str | None,
                    defined_by: dict[str, tuple[str, Location]], ir) -> dict:
    """Apply the rename scheme to the externally visible definitions among the gpu.module's symbol ops,
    then refuse a name that another gpu.module also defines (the RDC link would merge or reject them).
    Returns LoweredModule's symbol fields, names as in the image."""
    table = ir.SymbolTable(gpu_module.operation)
    symbols = {"kernels": [], "globals": [], "exported": [], "locations": {}}
    exported = []
    for op in ops:
        symbol = ir.StringAttr(op.attributes["sym_name"]).value
        symbols["locations"][symbol] = location_of(op.location, path)
        # Compared as MLIR prints them: parsing the attributes would import mlir.dialects.llvm (40 ms).
        linkage = str(op.attributes["linkage"]) if "linkage" in op.attributes else None
        if op.name == "llvm.func":
            defined = len(op.regions[0].blocks) > 0
        else:  # a global without an initializer and with external linkage is a declaration
            defined = ("value" in op.attributes or len(op.regions[0].blocks) > 0
                       or (linkage is not None and linkage not in _DECLARATION_LINKAGES))
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
                raise OffloadError(f"renaming '{original}' in gpu.module @{module_name} gives '{new_name}', a name "
                                   "the module already has: rename one of them", where)
            ir.SymbolTable.set_symbol_name(op, new_name)
            ir.SymbolTable.replace_all_symbol_uses(original, new_name, gpu_module.operation)
            symbols["locations"][new_name] = symbols["locations"].pop(original)
        if new_name in defined_by:
            first_module, first_where = defined_by[new_name]
            raise OffloadError(
                f"symbol '{new_name}' is defined by both gpu.module @{first_module} ({first_where}) and "
                f"gpu.module @{module_name} ({where}); all gpu.modules go into one device image per target: "
                "rename one, or pass --rename=module-prefix (names become <module>_<symbol>)", where)
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
        raise OffloadError("gpu.all_reduce is not uniform (it is under control flow, or in a gpu.func without the "
                           "`uniform` keyword): the NVVM/ROCDL lowering, like upstream's, rewrites only reductions "
                           "every thread of the block reaches; move it out of the branch or mark it `uniform`",
                           location_of(found[0].location, path))


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
    # A conversion cast only marks where a real leftover's value flows; prefer the real op.
    culprit = next((op for op in leftovers if op.name != "builtin.unrealized_conversion_cast"), leftovers[0])
    from offload.compiler.lowering_hints import pipeline_hint

    raise OffloadError(f"'{culprit.name}' in gpu.module @{name} cannot be lowered to device code "
                       f"(no NVVM/ROCDL lowering for it): {pipeline_hint(culprit.name)}",
                       location_of(culprit.location, path))


def _is_dynamic_shared_memory(op, ir) -> bool:
    """A zero-sized workgroup array is dynamic shared memory. The lowering makes it internal, which
    NVPTX turns into a 1-byte static `.shared` variable overlapping the kernel's other shared memory;
    as an external declaration (clang's `extern __shared__ T x[]`) it is `.extern .shared x[]`."""
    if "addr_space" not in op.attributes or ir.IntegerAttr(op.attributes["addr_space"]).value != 3:
        return False
    value_type = ir.TypeAttr(op.attributes["global_type"]).value
    return ("value" not in op.attributes and len(op.regions[0].blocks) == 0
            and _is_empty_array(value_type))


def _is_empty_array(value_type) -> bool:
    # The Python bindings expose no LLVM array type class; the type's own syntax names its size.
    return str(value_type).startswith("!llvm.array<0 x")


def _approximate_divisions(device, ir) -> None:
    """--no-prec-div: f32 divisions may be approximate (afn/arcp, as clang's -fcuda-prec-div=false)."""
    from mlir.dialects import arith

    flags = ir.AttrBuilder.get("Arith_FastMathAttr")(arith.FastMathFlags.afn | arith.FastMathFlags.arcp,
                                                      ir.Context.current)

    def mark(op):
        if op.name == "arith.divf":
            op.attributes["fastmath"] = flags
        return ir.WalkResult.ADVANCE

    device.operation.walk(mark)


def _promote_printf_arguments(device, ir) -> None:
    """gpu.printf integers narrower than 32 bits become i32 (i1 zero-, i8/i16 sign-extended), as C's
    default argument promotions make them: MLIR's vprintf lowering stores an i8 as one byte of the
    argument buffer, where %d reads four (the other three are uninitialized padding)."""
    from mlir.dialects import arith

    i32 = ir.IntegerType.get_signless(32)
    found = []

    def collect(op):
        if op.name == "gpu.printf":
            found.append(op)
        return ir.WalkResult.ADVANCE

    device.operation.walk(collect)
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
    "add": ("addi", "addf"), "mul": ("muli", "mulf"), "and": ("andi", None), "or": ("ori", None),
    "xor": ("xori", None), "minsi": ("minsi", None), "minui": ("minui", None), "maxsi": ("maxsi", None),
    "maxui": ("maxui", None), "minnumf": (None, "minnumf"), "maxnumf": (None, "maxnumf"),
    "minimumf": (None, "minimumf"), "maximumf": (None, "maximumf"),
}


def _expand_subgroup_reductions(device, subgroup_size: int, path: str, ir) -> None:
    """gpu.subgroup_reduce, which MLIR 22's NVVM and ROCDL conversions do not lower, becomes a butterfly
    of `gpu.shuffle xor` over the subgroup (width `subgroup_size`): log2(cluster size) steps at offsets
    stride, 2*stride, ... (a cluster is `cluster_size` lanes `cluster_stride` apart; default: the whole
    subgroup), as upstream's expand-to-shuffles test pattern does. Every lane gets its cluster's result."""
    from mlir.dialects import arith, gpu

    found = []

    def collect(op):
        if op.name == "gpu.subgroup_reduce":
            found.append(op)
        return ir.WalkResult.ADVANCE

    device.operation.walk(collect)
    i32 = ir.IntegerType.get_signless(32)
    for op in found:
        value = op.operands[0]
        kind = str(op.attributes["op"]).split()[-1].rstrip(">")
        scalar = value.type.maybe_downcast() if hasattr(value.type, "maybe_downcast") else value.type
        is_float = isinstance(scalar, (ir.F32Type, ir.F64Type))
        is_int = isinstance(scalar, ir.IntegerType) and scalar.width in (32, 64)
        combine = SUBGROUP_COMBINE.get(kind, (None, None))[1 if is_float else 0]
        size = ir.IntegerAttr(op.attributes["cluster_size"]).value if "cluster_size" in op.attributes \
            else subgroup_size
        stride = ir.IntegerAttr(op.attributes["cluster_stride"]).value if "cluster_stride" in op.attributes else 1
        if not (is_float or is_int) or combine is None or size * stride > subgroup_size:
            raise OffloadError(f"gpu.subgroup_reduce {kind} of {value.type} over clusters of {size} lanes "
                               f"{stride} apart cannot be expanded to shuffles on a {subgroup_size}-lane subgroup "
                               "(supported: i32/i64/f32/f64 within the subgroup)", location_of(op.location, path))
        with ir.InsertionPoint(op), op.location:
            width = arith.ConstantOp(i32, subgroup_size).result
            result, offset = value, stride
            while offset < size * stride:
                shift = arith.ConstantOp(i32, offset).result
                shuffled = gpu.ShuffleOp(result, shift, width, gpu.ShuffleMode.XOR).results[0]
                result = ir.Operation.create(f"arith.{combine}", results=[value.type],
                                             operands=[result, shuffled]).result
                offset *= 2
        op.results[0].replace_all_uses_with(result)
        op.erase()


def _add_passthrough(op, attributes: list[tuple[str, str]], ir) -> None:
    existing = list(ir.ArrayAttr(op.attributes["passthrough"])) if "passthrough" in op.attributes else []
    pairs = [ir.ArrayAttr.get([ir.StringAttr.get(k), ir.StringAttr.get(v)]) for k, v in attributes]
    op.attributes["passthrough"] = ir.ArrayAttr.get(existing + pairs)


# --- stages 2..: LLVM (llvmlite) -------------------------------------------------------------------

_target_machines: dict[tuple, object] = {}
_contexts: list = []


def fresh_context():
    """A new LLVM context that lives as long as the process: llvmlite frees modules when Python
    collects them, and a module freed after its context crashes the process."""
    import llvmlite.binding as llvm

    context = llvm.create_context()
    _contexts.append(context)
    return context


def target_machine(target: Target, opt_level: int = DEFAULT_OPT_LEVEL):
    """The llvmlite TargetMachine of a (validated) target, made once per process."""
    import llvmlite.binding as llvm

    key = (target, opt_level)
    if key not in _target_machines:
        llvm.initialize_all_targets()
        llvm.initialize_all_asmprinters()
        _target_machines[key] = llvm.Target.from_triple(target.triple).create_target_machine(
            cpu=target.arch, features=target.features, opt=opt_level, reloc="pic")
    return _target_machines[key]


def serialize(lowered: list[LoweredModule], target: Target, kind: TargetKind, options: CompileOptions,
              path: str, context, lto_pre_link: bool = False) -> DeviceImage:
    """The LLVM stages of one target in llvmlite (where LLVM's tools are not at hand, or --link-bitcode)."""
    machine = target_machine(target, options.opt_level)
    data_layout = str(machine.target_data)
    modules = [parse_lowered(m, target, data_layout, context) for m in lowered]
    kernels, user_globals, exported = image_symbols(lowered)
    linked = link_modules(modules)
    link_user_bitcode(linked, options.link_bitcode, target, data_layout, context)
    reflect = link_device_libraries(linked, kind, target, options, data_layout, context)
    internalize(linked, keep=set(kernels) | set(user_globals))
    optimize(linked, machine, options.opt_level, target, reflect)
    declared = [f.name for f in linked.functions if f.is_declaration]
    check_unresolved(declared, lambda: _call_graph(linked), kind, target, kernels, exported, options.gpu_rdc)
    bitcode = linked.as_bitcode()
    linked.close()
    return DeviceImage(target=target, bitcode=bitcode, kernels=kernels, globals=user_globals)


def parse_lowered(lowered: LoweredModule, target: Target, data_layout: str, context):
    import llvmlite.binding as llvm

    try:
        module = llvm.parse_assembly(lowered.llvm_ir, context)
    except RuntimeError as e:
        raise OffloadError(f"internal error: MLIR produced LLVM IR that LLVM rejects for gpu.module "
                           f"@{lowered.name}: {str(e).strip().splitlines()[0]}") from None
    module.name = lowered.name
    module.triple = target.triple
    module.data_layout = data_layout
    return module


def link_modules(modules: list):
    linked = modules[0]
    for other in modules[1:]:
        _link(linked, other, f"gpu.module @{other.name}")
    return linked


def _link(into, other, what: str) -> None:
    try:
        into.link_in(other)
    except RuntimeError as e:
        raise OffloadError(f"cannot link {what}: {' '.join(str(e).split())}") from None


def link_user_bitcode(module, files: list[str], target: Target, data_layout: str, context) -> None:
    import llvmlite.binding as llvm
    from offload.fsutil import read_input

    for path in files:
        data = read_input(path)
        try:
            library = llvm.parse_bitcode(data, context) if is_bitcode(data) else \
                llvm.parse_assembly(data.decode("utf-8", "replace"), context)
        except RuntimeError as e:
            raise OffloadError(f"--link-bitcode '{path}' is not valid LLVM bitcode or IR: "
                               f"{str(e).strip().splitlines()[0]}") from None
        try:  # an invalid library would fail our own module's verification (or trip an LLVM assertion) later
            library.verify()
        except RuntimeError as e:
            raise OffloadError(f"--link-bitcode '{path}' is not valid LLVM IR: {' '.join(str(e).split())[:300]}") from None
        if library.triple and library.triple != target.triple:
            raise OffloadError(f"--link-bitcode '{path}' is for '{library.triple}', not for {target.arch} "
                               f"({target.triple}); give one library per target triple")
        library.triple = target.triple
        library.data_layout = data_layout
        _link(module, library, f"--link-bitcode '{path}'")


def declares_call_into(module, prefixes: tuple[str, ...]) -> bool:
    """Whether `module` (llvmlite's, or our bitcode reader's: both list functions) declares a function
    with one of `prefixes`, i.e. calls into a device library."""
    return any(f.is_declaration and f.name.startswith(prefixes) for f in module.functions)


def link_device_libraries(module, kind: TargetKind, target: Target, options: CompileOptions,
                          data_layout: str, context) -> tuple:
    """libdevice or ocml/ockl/oclc: only when the code calls into them, and only what it needs
    (internalize + dead-code elimination drop the rest)."""
    import llvmlite.binding as llvm

    plan = kind.plan_libraries(target, options, declares_call_into(module, kind.library_prefixes))
    plan.show()
    module.link_in(_module_flags(plan.module_flags, target, data_layout, context))
    for path in plan.files:
        try:
            library = llvm.parse_bitcode(_library_bytes(path), context)
        except RuntimeError as e:
            raise OffloadError(f"device library '{path}' is not valid LLVM bitcode ({' '.join(str(e).split())}): "
                               f"{LIBRARY_FIX}") from None
        library.triple = target.triple
        library.data_layout = data_layout
        _link(module, library, f"device library '{path}'")
    return plan.reflect  # NVVM reflect values optimize() must apply


def _library_bytes(path: str) -> bytes:
    return bitcode_bytes(path, "device library")


def _module_flags(flags, target: Target, data_layout: str, context):
    import llvmlite.binding as llvm

    module = llvm.parse_assembly(module_flags_ir(flags, target), context)
    module.data_layout = data_layout
    return module


def module_flags_ir(flags, target: Target) -> str:
    """LLVM IR of a module holding only llvm.module.flags, built with llvmlite.ir (no LLVM loaded)."""
    import llvmlite.ir as lir

    holder = lir.Module(name="offload.flags")
    holder.triple = target.triple
    i32 = lir.IntType(32)
    for behaviour, name, value in flags:
        holder.add_named_metadata("llvm.module.flags", holder.add_metadata([i32(behaviour), name, i32(value)]))
    return str(holder)


def internalize(module, keep: set[str]) -> None:
    """Everything but the kernels and the user's externally visible device globals becomes internal,
    so dead-code elimination keeps only what they reach."""
    import llvmlite.binding as llvm

    for value in list(module.functions) + list(module.global_variables):
        if value.is_declaration or value.name in keep or value.name.startswith("llvm."):
            continue
        value.linkage = llvm.Linkage.internal


# NVVM reflect values for __CUDA_PREC_SQRT live in a process-wide LLVM option (LLVM 22 has no module
# flag for it): set it only when it changes, and hold the lock while a pipeline that reads it runs.
_reflect_lock = threading.Lock()
_reflect_set: dict[str, int] = {}


def _apply_reflect(values) -> None:
    import llvmlite.binding as llvm

    for name, value in values:
        if _reflect_set.get(name) != value:
            llvm.set_option("", f"-nvvm-reflect-add={name}={value}")
            _reflect_set[name] = value


def optimize(module, machine, opt_level: int, target: Target, reflect) -> None:
    """In-process: llvmlite builds only the per-module default<On> pipeline (no pre-link entry point)."""
    import llvmlite.binding as llvm

    tuning = llvm.create_pipeline_tuning_options(speed_level=opt_level)
    builder = llvm.create_pass_builder(machine, tuning)
    with _reflect_lock:
        _apply_reflect(reflect)
        cleanup = llvm.create_new_module_pass_manager()
        cleanup.add_global_dead_code_eliminate_pass()
        cleanup.run(module, builder)
        builder.getModulePassManager().run(module, builder)
        cleanup = llvm.create_new_module_pass_manager()
        cleanup.add_global_dead_code_eliminate_pass()
        cleanup.add_strip_dead_prototype_pass()
        cleanup.run(module, builder)
    try:
        module.verify()
    except RuntimeError as e:
        raise OffloadError(f"internal error: the {target.arch} device module does not verify: "
                           f"{' '.join(str(e).split())[:300]}") from None


def check_unresolved(declared: list[str], call_graph, kind: TargetKind, target: Target, kernels: list[str],
                     exported: dict[str, Location], relocatable: bool = False) -> None:
    """A declared non-intrinsic function the target does not provide is an error naming the symbol and
    a kernel that calls it: the image would otherwise fail only at the target's device link.
    `relocatable` (-fgpu-rdc): the program's own declarations may be defined by other device code of the
    link (CUDA objects compiled with -fgpu-rdc); a device-library function still must resolve here.
    call_graph() gives caller -> callees, asked for only when there is an error to report."""
    unresolved = sorted(name for name in declared
                        if not name.startswith("llvm.") and name not in kind.provided_symbols
                        and not (relocatable and not name.startswith(kind.library_prefixes)))
    if not unresolved:
        return
    callers = call_graph()
    symbol = unresolved[0]
    kernel = next((k for k in kernels if symbol in _reachable(k, callers)), None)
    where = f"called from kernel '{kernel}'" if kernel else "referenced by the device code"
    hint = ""
    if symbol.startswith(kind.library_prefixes):
        hint = " (a device-library function the library does not define)"
    more = f" (and {len(unresolved) - 1} more: {', '.join(unresolved[1:4])})" if len(unresolved) > 1 else ""
    raise OffloadError(f"unresolved device function '{symbol}' {where} for {target.arch}{hint}{more}; "
                       "define it in a gpu.module, pass --link-bitcode FILE.bc, or compile with -fgpu-rdc to "
                       "take it from CUDA device code at link",
                       exported.get(kernel) if kernel else None)


def _bitcode_call_graph(bitcode: bytes) -> dict[str, set[str]]:
    """The call graph of an image LLVM's tools wrote (our own output, so llvmlite may parse it here)."""
    import llvmlite.binding as llvm

    return _call_graph(llvm.parse_bitcode(bitcode, fresh_context()))


def _call_graph(module) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for function in module.functions:
        if function.is_declaration:
            continue
        callees = graph.setdefault(function.name, set())
        for block in function.blocks:
            for instruction in block.instructions:
                if instruction.opcode in ("call", "invoke", "callbr"):
                    operands = list(instruction.operands)
                    if operands and operands[-1].name:
                        callees.add(operands[-1].name)
    return graph


def _reachable(root: str, graph: dict[str, set[str]]) -> set[str]:
    seen, stack = set(), [root]
    while stack:
        name = stack.pop()
        for callee in graph.get(name, ()):
            if callee not in seen:
                seen.add(callee)
                stack.append(callee)
    return seen


def emit_assembly(bitcode: bytes, target: Target, opt_level: int = DEFAULT_OPT_LEVEL) -> str:
    """PTX (or AMDGPU assembly) for an image: the one NVPTX code generator (cubins are assembled from it)."""
    import llvmlite.binding as llvm

    return target_machine(target, opt_level).emit_assembly(llvm.parse_bitcode(bitcode, fresh_context()))


def emit_object(bitcode: bytes, target: Target, opt_level: int = DEFAULT_OPT_LEVEL) -> bytes:
    """A relocatable object for an image. llvmlite has no AMDGPU assembly parser: an AMDGPU module with
    inline asm (ockl has some) would abort the process in-process, so it goes through llc instead."""
    import llvmlite.binding as llvm

    module = llvm.parse_bitcode(bitcode, fresh_context())
    if not vendor_for(target.offload_kind).llvmlite_assembles_inline_asm and _has_inline_asm(module):
        return llc_object(bitcode, target, opt_level)
    return target_machine(target, opt_level).emit_object(module)


def find_llc(llvm_major: int, candidates: tuple[str, ...] | None = None) -> str | None:
    """An llc of our LLVM major (an older one could not read our bitcode), by Debian name first."""
    return find_llvm_tool("llc", llvm_major, candidates)


def find_llvm_tool(tool: str, llvm_major: int, candidates: tuple[str, ...] | None = None) -> str | None:
    """An LLVM tool (llc, opt) of our LLVM major, by Debian name first."""
    import shutil

    from offload.toolchain.tools import tool_version

    names = candidates or (f"{tool}-{llvm_major}", f"/usr/lib/llvm-{llvm_major}/bin/{tool}", tool)
    for name in names:
        path = shutil.which(name)
        # "LLVM version 22.1.8": the major must be ours.
        if path and (tool_version(path, "LLVM") or "").split(".")[0] == str(llvm_major):
            return path
    return None


def llc_object(bitcode: bytes, target: Target, opt_level: int = DEFAULT_OPT_LEVEL, llc: str | None = None) -> bytes:
    """The object of an image through an external llc of our LLVM major, or a one-line refusal with the fix."""
    import subprocess

    import llvmlite.binding as llvm

    major = llvm.llvm_version_info[0]
    llc = llc or find_llc(major)
    if llc is None:
        raise OffloadError(
            f"cannot emit a {target.arch} object: its device code has inline asm (from the ROCm device "
            f"libraries), which llvmlite's AMDGPU target cannot assemble, and no llc of LLVM {major} was found "
            f"(looked for llc-{major}, /usr/lib/llvm-{major}/bin/llc, llc): install llvm-{major}, or keep "
            f"bitcode device images (--device-image=bitcode) for a clang that reads LLVM {major} bitcode")
    command = [llc, f"-mtriple={target.triple}", f"-mcpu={target.arch}", f"-O{opt_level}",
               "--relocation-model=pic", "-filetype=obj", "-o", "-", "-"]
    if target.features:
        command.insert(3, f"-mattr={target.features}")
    from offload.compiler import trace

    trace.tool(command)
    done = subprocess.run(command, input=bitcode, capture_output=True)
    if done.returncode != 0 or not done.stdout:
        detail = " ".join(done.stderr.decode("utf-8", "replace").split()) or f"exit status {done.returncode}"
        raise OffloadError(f"llc failed to emit the {target.arch} object: {detail}")
    return done.stdout


def _has_inline_asm(module) -> bool:
    import llvmlite.binding as llvm

    return any(operand.value_kind == llvm.ValueKind.inline_asm
               for function in module.functions for block in function.blocks
               for instruction in block.instructions for operand in instruction.operands)
