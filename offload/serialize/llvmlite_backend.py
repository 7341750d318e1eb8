"""The device skeleton's steps in llvmlite, in-process (in a forked child, pipeline.py): where LLVM's tools
are not at hand. A module is an llvmlite ModuleRef in a context of the image's own.

llvmlite.binding is imported inside the functions: loading it maps LLVM (a 180 MB library), which a
compile that uses LLVM's tools never needs in this process; pipeline.py loads it on a thread while MLIR
lowers when this backend will run."""

from __future__ import annotations

import threading

from offload.errors import OffloadError, Words, parts_of
from offload.formats.targets import Target
from offload.options import DEFAULT_OPT_LEVEL, compile_option
from offload.packager.detect import is_bitcode
from offload.serialize.images import LoweredModule
from offload.serialize.kinds import KINDS, LibraryPlan
from offload.serialize.libraries import (
    LIBRARY_FIX,
    bitcode_bytes,
    check_library_triple,
    module_flags_ir,
    read_link_bitcode,
)

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
            cpu=target.arch, features=target.features, opt=opt_level, reloc="pic"
        )
    return _target_machines[key]


class LlvmliteStages:
    """The skeleton's steps (skeleton.Stages) for one job, in llvmlite."""

    def __init__(self, job):
        self.target: Target = job.target
        self.kind = KINDS[job.target.offload_kind]
        # A fresh LLVM context per image: named struct types never pick up suffixes from other images.
        self.context = fresh_context()
        self.machine = target_machine(job.target, job.options.opt_level)
        self.data_layout = str(self.machine.target_data)
        self.modules: list = []

    def __enter__(self) -> LlvmliteStages:
        return self

    def __exit__(self, *exc) -> None:
        for module in self.modules:
            module.close()

    def link_modules(self, lowered: list[LoweredModule]):
        modules = [self._parse_lowered(m) for m in lowered]
        linked = modules[0]
        for other in modules[1:]:
            _link(linked, other, f"gpu.module @{other.name}")
        self.modules.append(linked)
        return linked

    def _parse_lowered(self, lowered: LoweredModule):
        import llvmlite.binding as llvm

        try:
            module = llvm.parse_assembly(lowered.llvm_ir, self.context)
        except RuntimeError as e:
            raise OffloadError(
                f"internal error: MLIR produced LLVM IR that LLVM rejects for gpu.module "
                f"@{lowered.name}: {str(e).strip().splitlines()[0]}"
            ) from None
        module.name = lowered.name
        module.triple = self.target.triple
        module.data_layout = self.data_layout
        return module

    def link_user_bitcode(self, module, files: tuple[str, ...]):
        import llvmlite.binding as llvm

        target = self.target
        for path in files:
            data = read_link_bitcode(path)
            try:
                library = (
                    llvm.parse_bitcode(data, self.context)
                    if is_bitcode(data)
                    else llvm.parse_assembly(data.decode("utf-8", "replace"), self.context)
                )
            except RuntimeError as e:
                raise OffloadError(
                    (
                        compile_option("link_bitcode", f"'{path}'"),
                        f" is not valid LLVM bitcode or IR: {str(e).strip().splitlines()[0]}",
                    )
                ) from None
            try:  # an invalid library would fail our own module's verification (or trip an LLVM assertion) later
                library.verify()
            except RuntimeError as e:
                raise OffloadError(
                    (
                        compile_option("link_bitcode", f"'{path}'"),
                        f" is not valid LLVM IR: {' '.join(str(e).split())[:300]}",
                    )
                ) from None
            check_library_triple(path, library.triple, target)
            library.triple = target.triple
            library.data_layout = self.data_layout
            _link(module, library, (compile_option("link_bitcode", f"'{path}'"),))
        return module

    def link_libraries(self, module, plan: LibraryPlan):
        """libdevice or ocml/ockl/oclc, as planned (internalize + dead-code elimination drop what the code
        does not reach), and the plan's module flags."""
        import llvmlite.binding as llvm

        flags = llvm.parse_assembly(module_flags_ir(plan.module_flags, self.target), self.context)
        flags.data_layout = self.data_layout
        module.link_in(flags)
        for path in plan.files:
            try:
                library = llvm.parse_bitcode(bitcode_bytes(path, "device library"), self.context)
            except RuntimeError as e:
                raise OffloadError(
                    (f"device library '{path}' is not valid LLVM bitcode ({' '.join(str(e).split())}): ", *LIBRARY_FIX)
                ) from None
            library.triple = self.target.triple
            library.data_layout = self.data_layout
            _link(module, library, f"device library '{path}'")
        return module

    def optimize(self, module, keep: list[str], reflect, opt_level: int, lto_pre_link: bool):
        """Everything but `keep` internal, then llvmlite's per-module default<On> pipeline (it builds no
        pre-link pipeline; bench_code_quality compares this path's code at full optimization)."""
        _internalize(module, set(keep))
        _optimize(module, self.machine, opt_level, self.target, reflect)
        return module

    def functions(self, module) -> list[tuple[str, bool]]:
        return [(f.name, f.is_declaration) for f in module.functions]

    def call_graph(self, module) -> dict[str, set[str]]:
        return call_graph(module)

    def bitcode(self, module) -> bytes:
        return module.as_bitcode()


def _link(into, other, what: Words) -> None:
    try:
        into.link_in(other)
    except RuntimeError as e:
        raise OffloadError(("cannot link ", *parts_of(what), f": {' '.join(str(e).split())}")) from None


def _internalize(module, keep: set[str]) -> None:
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


def _optimize(module, machine, opt_level: int, target: Target, reflect) -> None:
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
        raise OffloadError(
            f"internal error: the {target.arch} device module does not verify: {' '.join(str(e).split())[:300]}"
        ) from None


def bitcode_call_graph(bitcode: bytes) -> dict[str, set[str]]:
    """The call graph of an image LLVM's tools wrote (our own output, so llvmlite may parse it here)."""
    import llvmlite.binding as llvm

    return call_graph(llvm.parse_bitcode(bitcode, fresh_context()))


def call_graph(module) -> dict[str, set[str]]:
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
