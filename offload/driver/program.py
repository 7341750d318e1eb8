"""The compile of one program, below the commands: `compile` and `run` call compile_program, and `compile`,
`run` and `ship` read compile's words with one set of parameters (compile_parameters). Its machinery is
imported inside the functions, as the commands' is: `mlir-offload compile --help` loads no compiler."""

from __future__ import annotations

import os

import click

from offload import trace
from offload.errors import OffloadError
from offload.formats.vendors import vendor_for
from offload.options import ClangStyleCommand, command_options, given_flags, resolve


def compile_parameters(function):
    """compile's words (IN.mlir, -o, -S, -v and the options table's compile options) as click parameters."""
    for parameter in reversed(_PARAMETERS):
        function = parameter(function)
    return function


_PARAMETERS = (
    click.argument("input_path", metavar="IN.mlir", type=click.Path()),
    click.option(
        "-o",
        "output",
        default=None,
        type=click.Path(),
        help="Output bundle: host LLVM bitcode with the device images embedded "
        "(an ELF object when the target clang cannot read our LLVM's bitcode). Default: "
        "<input stem>.offload.bc here (.o for an object, .offload.ll with -S).",
    ),
    click.option("-S", "textual", is_flag=True, help="Write textual LLVM IR instead of bitcode."),
    click.option(
        "-v", "verbose", is_flag=True, help="Print each stage with its time, the libraries found and every tool run."
    ),
    command_options("compile"),
)


def compile_words(words: list[str], prog_name: str):
    """`mlir-offload compile WORDS` in this process: compile's parsing, its errors (usage lines naming
    `prog_name`) and its compile; the status a `ctx.exit(N)` gave, else None."""
    return _words_command.main(args=words, prog_name=prog_name, standalone_mode=False)


def compile_words_context(words: list[str]) -> click.Context:
    """compile's reading of WORDS (`context.params`), nothing run: resilient (a bad word is compile's error later)."""
    return _words_command.make_context("compile", words, resilient_parsing=True)


def compile_program(input_path: str, output: str | None, textual: bool, verbose: bool, flags: dict) -> None:
    """Compile IN.mlir into one self-contained host bundle for `clang --offload-new-driver` (and its side
    files), or take the files of an earlier identical compile from the cache of whole compiles."""
    from offload.config import project_config
    from offload.fsutil import STDIN

    wants_rule = flags.get("dependency_file_wanted") or flags.get("user_dependency_file_wanted")
    if flags.get("dependency_file") == "":  # passed over, it wrote the default <output>.d
        raise OffloadError("-MF names no file (an empty name)")
    if flags.get("dependency_file") and not wants_rule:
        raise click.UsageError("-MF FILE names the dependency file of -MD: pass -MD too")
    if verbose:
        trace.enable()
    if input_path == STDIN and (output is None or wants_rule):
        raise OffloadError(
            "the program comes from standard input (-): name the output with -o, and no -MD "
            "(a make rule needs the input's file name)"
        )
    # Flags > mlir-offload.toml (read once) > defaults, resolved into one frozen plan.
    resolved = resolve(given_flags(flags), project_config(input_path))
    note_bundle_named_like_an_executable(output)
    whole, replayed = whole_compile_cache(input_path, output, textual, resolved, verbose)
    if replayed:
        return
    if whole is not None:
        whole.start()  # a miss: record what the compile reads
    try:
        compile_and_write(input_path, output, textual, resolved, whole)
    except BaseException:
        if whole is not None:
            whole.abandon()
        raise


@click.command("compile", cls=ClangStyleCommand)
@compile_parameters
def _words_command(input_path: str, output: str | None, textual: bool, verbose: bool, **flags) -> None:
    """compile's words read as the compile command reads them (no help text: run and ship show their own)."""
    compile_program(input_path, output, textual, verbose, flags)


def note_bundle_named_like_an_executable(output: str | None) -> None:
    """nvcc's `-o app` builds an executable; compile's writes a bundle. A person at a terminal is told how to get
    one (pipes, logs and build tools never see the note)."""
    import sys

    from offload.fsutil import STDOUT

    if output is None or output == STDOUT or "." in os.path.basename(output) or not sys.stderr.isatty():
        return
    click.echo(
        f"mlir-offload: note: '{output}' will be a bundle, not an executable: mlir-offload link {output} -o APP "
        "makes one (mlir-offload run IN.mlir compiles, links and runs)",
        err=True,
    )


def whole_compile_cache(input_path: str, output: str | None, textual: bool, resolved, verbose: bool):
    """(the cache of whole compiles, a CompileCache, when this compile may use it; whether it hit: then the
    earlier compile's files are written)."""
    from offload.cache import compiles as compile_cache

    options = resolved.options
    if output is None or not compile_cache.eligible(input_path, output, options, verbose):
        return None, False
    key = compile_cache.compile_key(input_path, output, textual, options, resolved.config_file)
    if key is None:
        return None, False
    from offload.driver.outputs import asked_formats, build_settings, compile_inputs, ptx_path
    from offload.formats.targets import ptx_only_archs
    from offload.fsutil import write_all

    build = build_settings(options, output, resolved.config_file, asked_formats(options, output, textual))
    ptx_stem = ptx_path(output, "")[: -len(".ptx")]

    def allowed(path: str) -> bool:  # the files this compile would write, and no others
        return path in (output, build.dependency_file) or (
            path.startswith(ptx_stem) and path.endswith(".ptx") and os.sep not in path[len(ptx_stem) :]
        )

    whole = compile_cache.CompileCache(key, options)
    files = whole.lookup(allowed)
    if files is None:
        return whole, False
    outputs = list(dict.fromkeys([output, build.dependency_file, *files]))
    writes_ptx = build.device_image == "ptx" or bool(ptx_only_archs(options.offload_arch))
    check_output_place(output, build, outputs, [input_path, *options.link_bitcode, options.libdevice], writes_ptx)
    write_all(files, inputs=compile_inputs(build, input_path, options))
    return None, True


def compile_and_write(input_path: str, output: str | None, textual: bool, resolved, whole) -> None:
    from offload.driver.outputs import compile_inputs, side_outputs
    from offload.driver.plan import compile_plan
    from offload.driver.stages import compile_bundle
    from offload.fsutil import write_all
    from offload.mlir.frontend import refuse_pipeline_writing_over

    plan = compile_plan(input_path, output, textual, resolved.options, resolved.config_file)
    build, options, output = plan.build, plan.options, plan.output
    check_output_name(output, plan, textual)
    trace_path = time_trace_path(options.time_trace, output)
    outputs = [output, build.dependency_file, trace_path, *planned_ptx_files(plan)]
    writes_ptx = any(
        plan.bundle.keeps_ptx(target.arch) for target in plan.targets if vendor_for(target.offload_kind).ptx
    )
    check_output_place(output, build, outputs, [input_path, *options.link_bitcode, options.libdevice], writes_ptx)
    if not textual:
        from offload.fsutil import refuse_binary_to_terminal

        refuse_binary_to_terminal(output, "a binary bundle", " (-S writes it as text)")
    refuse_pipeline_writing_over(options.pass_pipeline, [*compile_inputs(build, input_path, options), *outputs])
    if trace_path is not None:
        trace.record_time_trace()
    with trace.progress():
        compiled = compile_bundle(plan)
    side = side_outputs(build, input_path, output, options, compiled.ptx)
    if trace_path is not None:
        side[trace_path] = trace.time_trace(f"mlir-offload compile {os.path.basename(input_path)}")
    if compiled.resources is None:
        click.echo(
            "mlir-offload: warning: --resource-usage: no image was assembled by ptxas here (bitcode images "
            "are assembled at the link: pass --resource-usage to link, or compile with "
            "--device-image=cubin)",
            err=True,
        )
    for line in compiled.resources or ():  # as nvcc --resource-usage, on standard output
        click.echo(line, err=output == "-")
    # The bundle and its side files all or nothing; -MF or a PTX file onto the program, a library or the
    # bundle would destroy it (write_all refuses before writing).
    inputs = compile_inputs(build, input_path, options)
    write_all({output: compiled.data, **side}, inputs=inputs)
    if whole is not None:
        whole.store({output: compiled.data, **side}, exclude=inputs)


def time_trace_path(asked: str | None, output: str) -> str | None:
    """Where -ftime-trace[=FILE] writes: FILE, or alone the output's name with .json (as clang)."""
    from offload.fsutil import STDOUT

    if asked is None:
        return None
    if asked:
        return asked
    if output == STDOUT:
        raise OffloadError(
            "-ftime-trace names its file after the output: with -o - (standard output) pass -ftime-trace=FILE"
        )
    return os.path.splitext(output)[0] + ".json"


def planned_ptx_files(plan) -> list[str]:
    """The PTX files a compile will write beside the bundle: one per CUDA target with --device-image=ptx."""
    from offload.driver.outputs import ptx_path

    if plan.output == "-":
        return []
    return [
        ptx_path(plan.output, target.arch)
        for target in plan.targets
        if vendor_for(target.offload_kind).ptx and plan.bundle.keeps_ptx(target.arch)
    ]


def check_output_place(output: str, build, outputs: list, inputs: list, writes_ptx: bool) -> None:
    """Every output (the bundle, -MF, -ftime-trace, the PTX files) neither an input nor another output,
    checked before the work; `-o -` (standard output) only for the bundle alone: side files are named
    after the output, and a dependency rule needs a file as its target."""
    from offload.fsutil import STDOUT, check_outputs

    check_outputs(outputs, inputs)
    for written in outputs:
        # Checked before the work: a missing folder of the -MF file must not leave the bundle alone behind.
        folder = os.path.dirname(written or "") or "."
        if written and written != STDOUT and not os.path.isdir(folder):
            raise OffloadError(f"cannot write '{written}': no such folder '{folder}'")
    if output == STDOUT and build.dependency_file:
        raise OffloadError("-MD writes a make rule for the -o file: name a file with -o, not '-' (standard output)")
    if output == STDOUT and writes_ptx:
        raise OffloadError(
            "--device-image=ptx (or --portable, or a compute_XX arch) writes <out>.<arch>.ptx beside the bundle: "
            "name a file with -o, not '-' (standard output)"
        )


def check_output_name(output: str, plan, textual: bool) -> None:
    """A bundle for a clang that cannot read our bitcode is an ELF object: clang picks an input's language
    from its suffix, so such a bundle named .bc would be misread at link time."""
    if not textual and plan.bundle.host_format == "obj" and output.endswith((".bc", ".ll")):
        why = (
            "that clang cannot read LLVM bitcode this new"
            if plan.build.host_format is None
            else "--host-format=obj or --portable"
        )
        raise OffloadError(
            f"a bundle for clang {plan.target_clang} is an ELF object ({why}): name the output .o, not '{output}'"
        )
