"""Command `run`: compile, link and run a program in one step (as mlir-runner runs upstream's GPU
programs, and `cargo run`), its output passed through and its exit status returned."""

from __future__ import annotations

import os
import subprocess
import sys

import click

from offload.errors import Location, OffloadError
from offload.interrupts import check, temporary_folder

RUN_HELP = """Compile PROGRAM.mlir, link it and run it, passing its output through; exit with its status.

\b
Every option of `compile` is accepted (--offload-arch, -O, --pass-pipeline, ...; see
`mlir-offload compile --help`); what follows `--` goes to the program. The executable and bundle are
made in a private temporary folder, removed afterwards.
\b
Options of run itself:
  --emulate         run the kernels on this CPU (no GPU, driver or CUDA/ROCm toolkit needed): the
                    bundle's own device code retargeted to the host (docs/emulator.md); without
                    --offload-arch it compiles for sm_80
  --emulate --sanitize[=LIST]
                    also check every device memory access, barrier and allocation (memcheck,
                    racecheck, initcheck, synccheck, leakcheck, or all; default all but leakcheck):
                    each error is one line
                    naming the .mlir line, kernel, block and thread; exit status 1
  --link-arg WORD   one more word for the link (repeatable, or --link-arg=WORD): a library, object
                    or linker option, as `mlir-offload link` takes them (a program calling MLIR's
                    sparse tensor runtime needs the user's libmlir_c_runner_utils this way)
A `func.func @main(%argc: i32, %argv: !llvm.ptr) -> i32` receives the program arguments.
\b
Examples:
  mlir-offload run saxpy.mlir --offload-arch sm_80 --emulate
  mlir-offload run reduce.mlir --offload-arch gfx90a --emulate -- 1024
  mlir-offload run reduce.mlir --offload-arch sm_80 --emulate --sanitize=memcheck,racecheck
  mlir-offload run prog.mlir --offload-arch sm_80 --pass-pipeline 'builtin.module(convert-linalg-to-loops)'
  mlir-offload run sparse.mlir --emulate --link-arg /usr/lib/llvm-22/lib/libmlir_c_runner_utils.so.22.1
                   --link-arg -Wl,-rpath,/usr/lib/llvm-22/lib
"""
LINK_ARG = "--link-arg"
# Status of a run whose program a signal killed: as a shell reports it.
SIGNAL_STATUS_BASE = 128


class RawCommand(click.Command):
    """Keeps the arguments as written: compile parses its own, the program gets what follows `--`."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta["raw_arguments"] = list(args)
        return []


@click.command(
    "run",
    cls=RawCommand,
    help=RUN_HELP,
    add_help_option=False,
    options_metavar="PROGRAM.mlir [COMPILE OPTIONS] [--emulate] [-- PROGRAM ARGUMENTS]",
)
@click.pass_context
def run_command(ctx: click.Context) -> None:
    raw = ctx.meta["raw_arguments"]
    program_arguments: list[str] = []
    if "--" in raw:
        at = raw.index("--")
        raw, program_arguments = raw[:at], raw[at + 1 :]
    if any(word in ("-h", "--help") for word in raw):
        click.echo(ctx.get_help())
        ctx.exit(0)
    raw, link_arguments = _link_arguments(raw, ctx)
    emulate = "--emulate" in raw
    compile_arguments = [word for word in raw if word != "--emulate"]
    for word in compile_arguments:
        if word == "-o" or word.startswith("-o") and not word.startswith("-O"):
            raise click.UsageError(
                "run keeps its executable in a temporary folder: drop -o (compile and link write files)", ctx
            )
        if word in ("-S", "-MD", "-MMD"):
            raise click.UsageError(f"run writes no files: drop {word}", ctx)
        if word in ("--portable", "--host-format=obj") or word == "--host-format" and "obj" in compile_arguments:
            raise click.UsageError(f"run links the bundle where it is made, as bitcode: drop {word}", ctx)
    status = run_program(compile_arguments, program_arguments, emulate, link_arguments)
    ctx.exit(status)


def _link_arguments(raw: list[str], ctx: click.Context) -> tuple[list[str], list[str]]:
    """(the words left for compile, the words of each --link-arg WORD / --link-arg=WORD in order)."""
    kept: list[str] = []
    link: list[str] = []
    words = iter(raw)
    for word in words:
        if word == LINK_ARG:
            value = next(words, None)
            if value is None:
                raise click.UsageError(f"{LINK_ARG} needs a value: {LINK_ARG} WORD", ctx)
            link.append(value)
        elif word.startswith(LINK_ARG + "="):
            link.append(word[len(LINK_ARG) + 1 :])
        else:
            kept.append(word)
    if "" in link:
        raise click.UsageError(f"{LINK_ARG} needs a value that is not empty", ctx)
    return kept, link


def run_program(
    compile_arguments: list[str], program_arguments: list[str], emulate: bool, link_arguments: list[str] | None = None
) -> int:
    """Compile (compile's own option parsing), link (the bundle, then `link_arguments`), run; the program's
    exit status."""
    link_inputs = [*(link_arguments or ())]
    from offload.compiler.driver import compile_words

    with temporary_folder("mlir-offload-run-") as folder:
        bundle = os.path.join(folder, "program.offload.bc")
        executable = os.path.join(folder, "program")
        words = [*compile_arguments, *(["--emulate"] if emulate else []), "-o", bundle]
        status = compile_words(words, prog_name="mlir-offload run")
        if status:
            return int(status)
        from dataclasses import replace

        from offload.toolchain.link import find_bundles

        bundles = find_bundles([bundle])
        words_given = [word for word in compile_arguments if not word.startswith("-")]
        # The program's file (an option's value, `--offload-arch sm_80`, may come first).
        program = next((word for word in words_given if word.endswith((".mlir", ".mlirbc"))), None)
        program = program or next(iter(words_given), "program")
        # Messages name the program and its executable, never these temporary files.
        try:
            if emulate:
                from offload.toolchain.emulate import link_emulated

                link_emulated(
                    [replace(found, path=program) for found in bundles],
                    [bundle, *link_inputs],
                    executable,
                    shown={bundle: program},
                )
            else:
                from offload.toolchain.link import link_bundle

                link_bundle(bundles, [bundle, *link_inputs], executable)
        except OffloadError as e:
            shown = e.message.replace(bundle, program).replace(executable, f"the executable of {program}")
            # A message located at the bundle (or the program the messages name it by) is the program's.
            located = e.location is not None and e.location.file in (bundle, program)
            raise OffloadError(shown.replace(folder + "/", ""), Location(program) if located else None) from None
        # argv[0] is the program's name, as a shell gives it: never the temporary executable's path.
        return execute([os.path.splitext(program)[0], *program_arguments], executable)


def execute(argv: list[str], executable: str | None = None) -> int:
    """Run the program (`executable`, else argv[0]) with this process's standard streams. A signal to `run`
    goes on to it (offload.interrupts): it is never left running without us."""
    sys.stdout.flush()
    sys.stderr.flush()
    check()  # never started after an interrupt, even one that something swallowed
    try:
        child = subprocess.Popen(argv, executable=executable, restore_signals=True)
    except OSError as e:
        raise OffloadError(f"cannot run the linked program: {e.strerror}") from None
    status = child.wait()
    return SIGNAL_STATUS_BASE - status if status < 0 else status


COMMAND = run_command
