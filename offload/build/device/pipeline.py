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
from offload.build.frontend import Program, location_of, run_mlir
from offload.build.device.kinds import KINDS, TargetKind, function_attributes
from offload.build.device.libraries import bitcode_bytes
from offload.build.device.processes import ForkedCall, map_forked, worker_count
from offload.formats.targets import Target, check_ptx_feature

RENAME_SCHEMES = ("module-prefix", "prefix:NAME")
PREFIX_SCHEME = "prefix:"


@dataclass
class DeviceOptions:
    opt_level: int = 3
    prec_sqrt: bool = True
    prec_div: bool = True
    ftz: bool = False
    fast_math: bool = False
    link_bitcode: list[str] = field(default_factory=list)
    libdevice: str | None = None
    rocm_device_lib_path: str | None = None
    rename: str | None = None
    debug_info: str | None = None  # compile -g / -lineinfo (offload.build.frontend.DEBUG_EMISSION)
    cache: bool = True  # reuse and store images in the device image cache (cache.py)


@dataclass
class DeviceImage:
    target: Target
    bitcode: bytes
    kernels: list[str]
    globals: list[str]
    native: object = None  # offload.build.native.NativeCode, set by compile's codegen stage when packaged native


@dataclass
class LoweredModule:
    """One gpu.module after MLIR lowering: its LLVM IR text and where its symbols came from."""

    name: str
    llvm_ir: str
    kernels: list[str]
    locations: dict[str, Location]


def symbol_name(module_name: str, symbol: str, rename: str | None) -> str:
    """The name a gpu.module's symbol has in the device image (and so in the host's offload entries).
    --rename=module-prefix makes it `<module>_<symbol>`, --rename=prefix:NAME (--symbol-prefix NAME)
    `NAME_<symbol>`; without renaming it is the symbol itself."""
    if rename is None:
        return symbol
    if rename == "module-prefix":
        return f"{module_name}_{symbol}"
    if rename.startswith(PREFIX_SCHEME):
        prefix = rename[len(PREFIX_SCHEME):]
        if not prefix.isidentifier() or not prefix.isascii():
            raise OffloadError(f"symbol prefix '{prefix}' is not a C identifier (letters, digits, '_')")
        return f"{prefix}_{symbol}"
    raise OffloadError(f"unknown --rename scheme '{rename}' (valid: {', '.join(RENAME_SCHEMES)})")


def compile_device(program: Program, targets: list[Target], options: DeviceOptions,
                   *, jobs: int | None = None, lto_pre_link: bool = False) -> list[DeviceImage]:
    """Every gpu.module of `program`, for every target: one LLVM bitcode image per target. The MLIR
    lowering runs here (once per distinct pipeline); the LLVM stages of the targets run side by side
    in up to `jobs` forked processes (default: one per CPU), each in its own LLVM context, so an
    image is the same whichever other targets were asked for and however many jobs ran.
    lto_pre_link: the images stay bitcode the target clang LTO-links (optimizer.py says why it matters)."""
    from offload.build.device.optimizer import find_optimizer

    _check_options(options, targets)
    program.require_gpu_modules()
    if jobs is None and options.opt_level == 0:
        jobs = 1  # without the optimizer a target's LLVM stages cost less than forking a child
    pipelines = [KINDS[target.offload_kind].lowering_pipeline(target) for target in targets]
    distinct = list(dict.fromkeys(pipelines))  # sm_80 and sm_90 share one NVVM lowering
    # In a child: MLIR crashing on some input (e.g. translating an NVVM op it cannot) is one error line.
    kernel_attributes = {p: KINDS[t.offload_kind].kernel_attribute for p, t in zip(pipelines, targets)}
    lowering = ForkedCall(lambda names: [lower_to_llvm_ir(program, p, options, kernel_attributes[p]) for p in names],
                          distinct, "lowering the device code crashed")
    # Started after the fork: a thread loading LLVM must not be running when a child is forked.
    preload = _preload_llvm() if worker_count(len(targets), jobs) > 1 else None
    optimizer = find_optimizer(options.opt_level)
    lowered_by_pipeline = dict(zip(distinct, lowering.result()))
    work = [SerializeJob(lowered_by_pipeline[pipeline], target, options, program.path, optimizer, lto_pre_link)
            for pipeline, target in zip(pipelines, targets)]
    cache = _open_cache(options)
    keys = [_cache_key(job) for job in work] if cache else [None] * len(work)
    images = [cache.get(key, job.target) if cache else None for key, job in zip(keys, work)]
    missing = [i for i, image in enumerate(images) if image is None]
    if preload is not None:
        preload.join()  # no other thread may run when the children are forked
    # LLVM parses the files the user names (--link-bitcode, --libdevice, --rocm-device-lib-path): never in
    # this process, whatever they hold.
    built = map_forked(serialize_job, [work[i] for i in missing], [targets[i].arch for i in missing], jobs,
                       isolate=bool(options.link_bitcode or options.libdevice or options.rocm_device_lib_path))
    for i, image in zip(missing, built):
        images[i] = image
        if cache:
            cache.put(keys[i], image)
    return images


def _open_cache(options: DeviceOptions):
    if not options.cache:
        return None
    from offload.build.device.cache import ImageCache, cache_root

    root = cache_root()
    return ImageCache(root) if root else None


def _cache_key(job: SerializeJob) -> str:
    from offload.build.device.cache import image_key

    kind = KINDS[job.target.offload_kind]
    try:  # every library the image may link: the plan as if the code called into them
        libraries = list(kind.plan_libraries(job.target, job.options, True).files)
    except OffloadError:
        libraries = []  # none found: serialization reports it if the code needs one
    return image_key(job, [*job.options.link_bitcode, *libraries])


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
    options: DeviceOptions
    path: str
    optimizer: object  # offload.build.device.optimizer.Optimizer
    lto_pre_link: bool = False


def serialize_job(job: SerializeJob) -> DeviceImage:
    import llvmlite.binding as llvm

    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    # A fresh LLVM context per image: named struct types never pick up suffixes from other images.
    return serialize(job.lowered, job.target, KINDS[job.target.offload_kind], job.options, job.path,
                     fresh_context(), job.optimizer, job.lto_pre_link)


def _check_options(options: DeviceOptions, targets: list[Target]) -> None:
    if options.opt_level not in (0, 1, 2, 3):
        raise OffloadError(f"optimization level -O{options.opt_level} is not one of -O0, -O1, -O2, -O3")
    symbol_name("m", "s", options.rename)  # validates the scheme
    if not targets:
        raise OffloadError("no offload target: pass --offload-arch, e.g. sm_80 or gfx90a")
    for target in targets:
        if target.offload_kind not in KINDS:
            raise OffloadError(f"unknown offload kind '{target.offload_kind}' (valid: cuda, hip)")
        if target.offload_kind == "cuda":
            check_ptx_feature(target)


# --- stage 1: MLIR lowering (on a clone: the host step lowers the same Program) -------------------

def lower_to_llvm_ir(program: Program, pipeline: str, options: DeviceOptions,
                     kernel_attribute: str) -> list[LoweredModule]:
    """Each gpu.module lowered by `pipeline` and translated to LLVM IR; its kernels are the functions
    with `kernel_attribute` (the target kind's, see kinds.py)."""
    import mlir.ir as ir
    import mlir.passmanager as passmanager
    from mlir.dialects import arith
    from mlir.dialects import llvm as llvm_dialect

    with program.context, ir.Location.unknown():
        device = ir.Module.create()
        insertion = ir.InsertionPoint(device.body)
        for gpu_module in program.gpu_modules():
            gpu_module.operation.clone(insertion)
        if options.fast_math or not options.prec_div:
            _approximate_divisions(device, ir, arith)
        _refuse_non_uniform_all_reduce(device, program.path, ir)
        manager = passmanager.PassManager.parse(pipeline)
        run_mlir(lambda: manager.run(device.operation), program.path, "cannot lower the device code")
        from offload.build.frontend import add_debug_info

        add_debug_info(device, options.debug_info and "lineinfo", program.path)
        attributes = function_attributes(options)
        lowered = []
        for gpu_module in device.body.operations:
            name = ir.StringAttr(gpu_module.attributes["sym_name"]).value
            kernels, locations = [], {}
            for op in gpu_module.regions[0].blocks[0].operations:
                if op.name not in ("llvm.func", "llvm.mlir.global"):
                    continue
                symbol = ir.StringAttr(op.attributes["sym_name"]).value
                locations[symbol] = location_of(op.location, program.path)
                if op.name == "llvm.mlir.global" and _is_dynamic_shared_memory(op, ir):
                    op.attributes["linkage"] = ir.Attribute.parse("#llvm.linkage<external>")
                if op.name == "llvm.func" and len(op.regions[0].blocks) > 0:
                    if kernel_attribute in op.attributes:
                        kernels.append(symbol)
                    if attributes:
                        _add_passthrough(op, attributes, ir)
            _check_fully_lowered(gpu_module, name, program.path, ir)
            text = run_mlir(lambda: llvm_dialect.translate_module_to_llvmir(gpu_module.operation),
                            program.path, f"cannot translate gpu.module @{name} to LLVM IR")
            lowered.append(LoweredModule(name, text, kernels, locations))
        return lowered


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
    raise OffloadError(f"'{culprit.name}' in gpu.module @{name} cannot be lowered to device code "
                       "(no NVVM/ROCDL lowering for it: lower it to scf/arith/memref/gpu ops first)",
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


def _approximate_divisions(device, ir, arith) -> None:
    """--no-prec-div: f32 divisions may be approximate (afn/arcp, as clang's -fcuda-prec-div=false)."""
    flags = ir.AttrBuilder.get("Arith_FastMathAttr")(arith.FastMathFlags.afn | arith.FastMathFlags.arcp,
                                                      ir.Context.current)

    def mark(op):
        if op.name == "arith.divf":
            op.attributes["fastmath"] = flags
        return ir.WalkResult.ADVANCE

    device.operation.walk(mark)


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


def target_machine(target: Target, opt_level: int = 3):
    """The llvmlite TargetMachine of a (validated) target, made once per process."""
    import llvmlite.binding as llvm

    key = (target, opt_level)
    if key not in _target_machines:
        llvm.initialize_all_targets()
        llvm.initialize_all_asmprinters()
        _target_machines[key] = llvm.Target.from_triple(target.triple).create_target_machine(
            cpu=target.arch, features=target.features, opt=opt_level, reloc="pic")
    return _target_machines[key]


def serialize(lowered: list[LoweredModule], target: Target, kind: TargetKind, options: DeviceOptions,
              path: str, context, optimizer=None, lto_pre_link: bool = False) -> DeviceImage:
    machine = target_machine(target, options.opt_level)
    data_layout = str(machine.target_data)
    modules = [parse_lowered(m, target, data_layout, context) for m in lowered]
    exported, kernels, user_globals = rename_and_check_symbols(lowered, modules, options.rename, path)
    linked = link_modules(modules)
    link_user_bitcode(linked, options.link_bitcode, target, data_layout, context)
    reflect = link_device_libraries(linked, kind, target, options, data_layout, context)
    internalize(linked, keep=set(kernels) | set(user_globals))
    if optimizer is not None and optimizer.path:
        from offload.build.device.optimizer import run_opt

        bitcode = run_opt(optimizer, linked.as_bitcode(), target, options.opt_level, reflect, lto_pre_link)
        linked.close()
        linked = _parse_own_bitcode(bitcode, context)
    else:
        optimize(linked, machine, options.opt_level, target, reflect)
        bitcode = linked.as_bitcode()
    check_unresolved(linked, kind, target, kernels, exported)
    linked.close()
    return DeviceImage(target=target, bitcode=bitcode, kernels=kernels, globals=user_globals)


def _parse_own_bitcode(bitcode: bytes, context):
    import llvmlite.binding as llvm

    try:
        return llvm.parse_bitcode(bitcode, context)
    except RuntimeError as e:
        raise OffloadError(f"internal error: the optimizer's bitcode does not parse: {' '.join(str(e).split())[:300]}") \
            from None


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


def rename_and_check_symbols(lowered: list[LoweredModule], modules: list, rename: str | None, path: str):
    """Apply the rename scheme to each gpu.module's external definitions, then refuse any name two
    gpu.modules both define (the RDC link would merge or reject them). Returns (exported name ->
    Location, kernels, externally visible globals), names as in the image."""
    import llvmlite.binding as llvm

    exported: dict[str, tuple[str, Location]] = {}
    kernels, user_globals = [], []
    for source, module in zip(lowered, modules):
        definitions = [f for f in module.functions if not f.is_declaration] + \
                      [g for g in module.global_variables if not g.is_declaration]
        for value in definitions:
            if value.linkage in (llvm.Linkage.internal, llvm.Linkage.private) or value.name.startswith("llvm."):
                continue
            original = value.name
            new_name = symbol_name(source.name, original, rename)
            if new_name != original:
                value.name = new_name
            where = source.locations.get(original, Location(path))
            if new_name in exported:
                first_module, first_where = exported[new_name]
                raise OffloadError(
                    f"symbol '{new_name}' is defined by both gpu.module @{first_module} ({first_where}) and "
                    f"gpu.module @{source.name} ({where}); all gpu.modules go into one device image per target: "
                    "rename one, or pass --rename=module-prefix (names become <module>_<symbol>)", where)
            exported[new_name] = (source.name, where)
            if original in source.kernels:
                kernels.append(new_name)
            elif value.is_global:
                user_globals.append(new_name)
    return {name: where for name, (_, where) in exported.items()}, kernels, user_globals


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
            library = llvm.parse_bitcode(data, context) if _is_bitcode(data) else \
                llvm.parse_assembly(data.decode("utf-8", "replace"), context)
        except RuntimeError as e:
            raise OffloadError(f"--link-bitcode '{path}' is not valid LLVM bitcode or IR: "
                               f"{str(e).strip().splitlines()[0]}") from None
        if library.triple and library.triple != target.triple:
            raise OffloadError(f"--link-bitcode '{path}' is for '{library.triple}', not for {target.arch} "
                               f"({target.triple}); give one library per target triple")
        library.triple = target.triple
        library.data_layout = data_layout
        _link(module, library, f"--link-bitcode '{path}'")


def _is_bitcode(data: bytes) -> bool:
    return data[:4] in (b"BC\xc0\xde", b"\xde\xc0\x17\x0b")


def _declared_calls(module, prefixes: tuple[str, ...]) -> bool:
    return any(f.is_declaration and f.name.startswith(prefixes) for f in module.functions)


def link_device_libraries(module, kind: TargetKind, target: Target, options: DeviceOptions,
                          data_layout: str, context) -> tuple:
    """libdevice or ocml/ockl/oclc: only when the code calls into them, and only what it needs
    (internalize + dead-code elimination drop the rest)."""
    import llvmlite.binding as llvm

    plan = kind.plan_libraries(target, options, _declared_calls(module, kind.library_prefixes))
    module.link_in(_module_flags(plan.module_flags, target, data_layout, context))
    for path in plan.files:
        try:
            library = llvm.parse_bitcode(_library_bytes(path), context)
        except RuntimeError as e:
            raise OffloadError(f"device library '{path}' is not valid LLVM bitcode ({' '.join(str(e).split())}): "
                               "point --libdevice or --rocm-device-lib-path at the toolkit's library") from None
        library.triple = target.triple
        library.data_layout = data_layout
        _link(module, library, f"device library '{path}'")
    return plan.reflect  # NVVM reflect values optimize() must apply


def _library_bytes(path: str) -> bytes:
    return bitcode_bytes(path, "device library")


def _module_flags(flags, target: Target, data_layout: str, context):
    """A module holding only llvm.module.flags, built with llvmlite.ir and linked in."""
    import llvmlite.binding as llvm
    import llvmlite.ir as lir

    holder = lir.Module(name="offload.flags")
    holder.triple = target.triple
    holder.data_layout = data_layout
    i32 = lir.IntType(32)
    for behaviour, name, value in flags:
        holder.add_named_metadata("llvm.module.flags", holder.add_metadata([i32(behaviour), name, i32(value)]))
    return llvm.parse_assembly(str(holder), context)


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


def check_unresolved(module, kind: TargetKind, target: Target, kernels: list[str],
                     exported: dict[str, Location]) -> None:
    """A declared non-intrinsic function the target does not provide is an error naming the symbol and
    a kernel that calls it: the image would otherwise fail only at the target's device link."""
    unresolved = sorted(f.name for f in module.functions
                        if f.is_declaration and not f.name.startswith("llvm.")
                        and f.name not in kind.provided_symbols)
    if not unresolved:
        return
    callers = _call_graph(module)
    symbol = unresolved[0]
    kernel = next((k for k in kernels if symbol in _reachable(k, callers)), None)
    where = f"called from kernel '{kernel}'" if kernel else "referenced by the device code"
    hint = ""
    if symbol.startswith(kind.library_prefixes):
        hint = " (a device-library function the library does not define)"
    more = f" (and {len(unresolved) - 1} more: {', '.join(unresolved[1:4])})" if len(unresolved) > 1 else ""
    raise OffloadError(f"unresolved device function '{symbol}' {where} for {target.arch}{hint}{more}; "
                       "define it in a gpu.module or pass --link-bitcode FILE.bc",
                       exported.get(kernel) if kernel else None)


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


def emit_assembly(bitcode: bytes, target: Target, opt_level: int = 3) -> str:
    """PTX (or AMDGPU assembly) for an image: the one NVPTX code generator (cubins are assembled from it)."""
    import llvmlite.binding as llvm

    return target_machine(target, opt_level).emit_assembly(llvm.parse_bitcode(bitcode, fresh_context()))


def emit_object(bitcode: bytes, target: Target, opt_level: int = 3) -> bytes:
    """A relocatable object for an image. llvmlite has no AMDGPU assembly parser: an AMDGPU module with
    inline asm (ockl has some) would abort the process in-process, so it goes through llc instead."""
    import llvmlite.binding as llvm

    module = llvm.parse_bitcode(bitcode, fresh_context())
    if target.offload_kind == "hip" and _has_inline_asm(module):
        return llc_object(bitcode, target, opt_level)
    return target_machine(target, opt_level).emit_object(module)


def find_llc(llvm_major: int, candidates: tuple[str, ...] | None = None) -> str | None:
    """An llc of our LLVM major (an older one could not read our bitcode), by Debian name first."""
    return find_llvm_tool("llc", llvm_major, candidates)


def find_llvm_tool(tool: str, llvm_major: int, candidates: tuple[str, ...] | None = None) -> str | None:
    """An LLVM tool (llc, opt) of our LLVM major, by Debian name first."""
    import shutil

    from offload.target.toolchain import tool_version

    names = candidates or (f"{tool}-{llvm_major}", f"/usr/lib/llvm-{llvm_major}/bin/{tool}", tool)
    for name in names:
        path = shutil.which(name)
        # "LLVM version 22.1.8": the major must be ours.
        if path and (tool_version(path, "LLVM") or "").split(".")[0] == str(llvm_major):
            return path
    return None


def llc_object(bitcode: bytes, target: Target, opt_level: int = 3, llc: str | None = None) -> bytes:
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
    from offload.build import trace

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
