"""Command `link`: bundles, objects and flags -> an executable, through the target's clang."""

from __future__ import annotations

import textwrap
from typing import Any

import click

from offload.errors import OffloadError
from offload.options.link import FLAGS, SPECS, resolve_link, takes_value
from offload.options.spec import SWITCH, describe, from_file

LINK_HELP = """Link bundles (and objects, libraries, clang flags) into an executable with the target's clang.

\b
Every input file with an mlir-offload record is a bundle: each is checked against the clang (entry
layout, bitcode it can read), and all must be made for the same clang. Other inputs go to clang.
\b
Options of link itself (every other argument goes to clang unchanged; each but --dry-run and -v is also
a key of mlir-offload.toml, found from the current folder, and a keyword of offload.api.link):
  -o APP            output executable (default: a.out, as clang's and nvcc's)
{options}
\b
Clang options that take a separate argument keep it (`-Xlinker -rpath`, `-L DIR`, `-Xarch_device -g`).
`-Xcuda-ptxas -v` reaches ptxas (as -Xoffload-linker -v: clang's linker wrapper runs ptxas itself).
"""
DEFAULT_EXECUTABLE = "a.out"
HELP_COLUMN = 20  # where an option's help starts in LINK_HELP


def options_help() -> str:
    """LINK_HELP's rows of the options table: flags, value and help, wrapped as click's \\b blocks keep them."""
    rows = []
    for spec in SPECS.values():
        flags = ", ".join(flag for declaration in spec.flags for flag in declaration.split("/"))
        metavar = spec.metavar or ""
        value = metavar if metavar.startswith("[") or not metavar else f" {metavar}"  # --sanitize[=LIST]
        head = f"  {flags}{value}"
        lines = textwrap.wrap(spec.help, 104 - HELP_COLUMN, break_on_hyphens=False)
        if len(head) + 1 > HELP_COLUMN:
            rows.append(head)
        else:
            first = lines.pop(0)
            rows.append(head.ljust(HELP_COLUMN) + first)
        rows += [" " * HELP_COLUMN + line for line in lines]
    return "\n".join(rows)


# Clang flags pass through untouched, so click must not parse them (it would split -L/x/h into -L -h ...).
@click.command(
    "link",
    help=LINK_HELP.format(options=options_help()),
    add_help_option=False,
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
)
@click.argument(
    "arguments", nargs=-1, type=click.UNPROCESSED, metavar="BUNDLE.bc [OBJECTS, LIBRARIES, FLAGS]... -o APP"
)
@click.pass_context
def link_command(ctx: click.Context, arguments: tuple[str, ...]) -> None:
    from offload.foreign_options import translate_link
    from offload.formats.clang_arguments import input_files

    output, given, passthrough = read_arguments(ctx, translate_link(list(arguments)))
    from offload.config import link_config

    project = link_config()
    try:  # flags > mlir-offload.toml > defaults
        resolved = resolve_link(given, project)
    except OffloadError as error:  # two options that do not combine: a usage error, as a bad flag is
        raise click.UsageError(error.message, ctx) from None
    options = resolved.options
    positional = input_files(passthrough)
    if not positional:
        raise click.UsageError("missing argument 'BUNDLE.bc'", ctx)
    output = output or DEFAULT_EXECUTABLE  # as clang and nvcc name an executable without -o
    from offload.fsutil import check_output, refuse_input_as_output

    refuse_input_as_output(output, positional)  # clang would overwrite the bundle or an object
    check_output(output)
    if not options.dry_run:
        from offload.fsutil import refuse_binary_to_terminal

        refuse_binary_to_terminal(output, "an executable")
    for item in positional:
        if item.endswith((".mlir", ".mlirbc")):
            raise OffloadError(
                f"'{item}' is an MLIR program, not a bundle: compile it first "
                f"(mlir-offload compile {item} --offload-arch ARCH -o BUNDLE.bc)"
            )
    from offload.driver.textual_ir import read_offload_images
    from offload.toolchain.link import find_bundles, link_bundle

    try:
        if options.emulate:
            from offload.toolchain.emulate import link_emulated

            link_emulated(emulated_bundles(passthrough), passthrough, output, options)
        else:
            # Where LLVM is, a text input that is no bundle gets LLVM's located reading error.
            link_bundle(find_bundles(passthrough, read_offload_images), passthrough, output, options)
    except OffloadError as error:  # an option whose value came from mlir-offload.toml is named as its key
        raise from_file(error, resolved.origins) from None


def read_arguments(ctx: click.Context, items: list[str]) -> tuple[str | None, dict[str, Any], list[str]]:
    """(-o, the options table's flags given, typed, the words that go to clang) of link's arguments. A
    value the option's kind refuses is a usage error naming the flag."""
    from offload.formats.clang_arguments import takes_separate_argument

    output = None
    given: dict[str, Any] = {}
    passthrough: list[str] = []
    while items:
        item = items.pop(0)
        flag, joined, inline = item.partition("=")
        name = FLAGS.get(flag)
        if item in ("-h", "--help"):
            click.echo(ctx.get_help())
            ctx.exit(0)
        elif flag == "-o":
            if not (joined or items):
                raise click.UsageError("option '-o' requires a value", ctx)
            output = inline if joined else items.pop(0)
        elif name is not None and SPECS[name].kind is SWITCH and not joined:
            given[name] = True
        elif name is not None and SPECS[name].kind.bare is not None:  # -flag[=VALUE]: --sanitize[=LIST]
            given[name] = checked(ctx, name, flag, inline if joined else str(SPECS[name].kind.bare))
        elif name is not None and takes_value(SPECS[name].kind):
            if not (inline if joined else items and not items[0].startswith("-")):
                raise click.UsageError(f"option '{flag}' requires a value", ctx)
            value = inline if joined else items.pop(0)
            if SPECS[name].kind.repeatable:
                given[name] = (*given.get(name, ()), *checked(ctx, name, flag, value))
            else:
                given[name] = checked(ctx, name, flag, value)
        elif takes_separate_argument(item) and items:
            passthrough += [item, items.pop(0)]  # clang's two-word option: its argument is never link's
        else:
            passthrough.append(item)
    return output, given, passthrough


def checked(ctx: click.Context, name: str, flag: str, value: str) -> Any:
    """A flag's value as its option's kind reads it; a refused one is a usage error (exit 2)."""
    try:
        return SPECS[name].kind.check(value)
    except TypeError as e:
        raise click.UsageError(f"{flag} expects {e.args[0]}, got {describe(value)}", ctx) from None


def emulated_bundles(arguments: list[str]) -> list:
    """The bundles of an emulated link; none where CUDA/HIP objects of clang's offload driver bring the
    kernels (`link --emulate main.o scale.o`)."""
    import os

    from offload.driver.textual_ir import read_offload_images
    from offload.formats.clang_arguments import input_files
    from offload.toolchain.emulate_objects import device_objects
    from offload.toolchain.link import find_bundles

    try:
        return find_bundles(arguments, read_offload_images)
    except OffloadError:
        if device_objects([item for item in input_files(arguments) if os.path.isfile(item)], set()):
            return []
        raise


COMMAND = link_command
