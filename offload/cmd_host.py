"""`compile` (MLIR program -> one host bundle) and `link` (bundle -> executable with the target's clang)."""

from __future__ import annotations

import os

import click

from offload.build_options import build_options
from offload.cmd_device import device_options, device_settings
from offload.errors import OffloadError


@click.command("compile")
@click.argument("input_path", metavar="IN.mlir", type=click.Path(dir_okay=False))
@click.option("-o", "output", required=True, type=click.Path(dir_okay=False),
              help="Output bundle: host LLVM bitcode with the device images embedded "
                   "(an ELF object when the target clang cannot read our LLVM's bitcode).")
@click.option("-S", "textual", is_flag=True, help="Write textual LLVM IR instead of bitcode.")
@click.option("--target-clang", "target_clang", default=None, metavar="N",
              help="Major version of the clang that links the bundle (default 22): offload entry layout, "
                   "kind values, and whether it reads our bitcode (toolchain/profiles/clangN.toml).")
@device_options
@build_options
def compile_command(input_path: str, output: str, textual: bool, target_clang: str | None,
                    **device_kwargs) -> None:
    """Compile IN.mlir into one self-contained host bundle for `clang --offload-new-driver`."""
    from offload.fsutil import atomic_write
    from offload.pipeline import compile_bundle
    from offload.profiles import load_profile

    from offload.build_options import build_settings, write_side_outputs

    # --portable/--device-image/--host-format/-MD/-MF, and --target-clang, filled from mlir-offload.toml.
    build = build_settings(input_path, output, target_clang, textual, device_kwargs)
    target_clang = build.target_clang
    load_profile(target_clang)  # an unknown --target-clang fails before any work
    targets, options = device_settings(**device_kwargs)
    check_output_name(output, target_clang, textual, build.host_format)
    check_output_place(output, build, [input_path, *options.link_bitcode, options.libdevice])
    data = compile_bundle(input_path, targets, options, target_clang, emit="ll" if textual else "bc",
                          device_image=build.device_image, host_format=build.host_format, ptx_out=build.ptx)
    atomic_write(output, data)
    write_side_outputs(build, input_path, output, options)


def check_output_place(output: str, build, inputs: list) -> None:
    """Not over an input; `-o -` (standard output) only for the bundle alone: side files are named
    after the output, and a dependency rule needs a file as its target."""
    from offload.fsutil import STDOUT, refuse_input_as_output

    refuse_input_as_output(output, inputs)
    for written in (output, build.dependency_file):
        # Checked before the work: a missing folder of the -MF file must not leave the bundle alone behind.
        folder = os.path.dirname(written or "") or "."
        if written and written != STDOUT and not os.path.isdir(folder):
            raise OffloadError(f"cannot write '{written}': no such folder '{folder}'")
    if output == STDOUT and build.dependency_file:
        raise OffloadError("-MD writes a make rule for the -o file: name a file with -o, not '-' (standard output)")
    if output == STDOUT and build.device_image == "ptx":
        raise OffloadError("--device-image=ptx (or --portable) writes <out>.<arch>.ptx beside the bundle: "
                           "name a file with -o, not '-' (standard output)")


def check_output_name(output: str, target_clang, textual: bool, host_format: str | None = None) -> None:
    """A bundle for a clang that cannot read our bitcode is an ELF object: clang picks an input's language
    from its suffix, so such a bundle named .bc would be misread at link time."""
    from offload.pipeline import plan_host_format

    if not textual and plan_host_format(target_clang, host_format) == "obj" and output.endswith((".bc", ".ll")):
        why = "that clang cannot read LLVM bitcode this new" if host_format is None else "--host-format=obj or --portable"
        from offload.profiles import load_profile

        raise OffloadError(f"a bundle for clang {load_profile(target_clang).clang_major} is an ELF object ({why}): name the output .o, "
                           f"not '{output}'")


LINK_HELP = """Link bundles (and objects, libraries, clang flags) into an executable with the target's clang.

\b
Every input file with an mlir-offload record is a bundle: each is checked against the clang (entry
layout, bitcode it can read), and all must be made for the same clang. Other inputs go to clang.
\b
Options of link itself (every other argument goes to clang unchanged):
  -o APP            output executable (required)
  --clang PATH      the clang to link with (default: clang-N of the bundles' profile N, then clang)
  --cuda-path DIR   CUDA toolkit (default: found)
  --rocm-path DIR   ROCm (default: found)
  --ptx FILE        add this PTX (from `compile --portable`: BUNDLE.<arch>.ptx) to the executable's fatbin
                    beside the arch's cubin, so newer GPUs JIT-compile it (repeat per arch; CUDA)
  --ptx-beside      add the PTX files compile wrote beside each bundle (BUNDLE.<arch>.ptx, where they
                    exist and are not older than it; none for an arch several bundles have PTX for)
  --dry-run         print the clang command instead of running it
  -v                print the clang command (and clang's messages) while running it
"""
LINK_VALUE_OPTIONS = {"-o": "output", "--clang": "clang", "--cuda-path": "cuda_path", "--rocm-path": "rocm_path"}
LINK_FLAGS = {"--dry-run": "dry_run", "-v": "verbose", "--ptx-beside": "ptx_beside"}


# Clang flags pass through untouched, so click must not parse them (it would split -L/x/h into -L -h ...).
@click.command("link", help=LINK_HELP, add_help_option=False,
               context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.argument("arguments", nargs=-1, type=click.UNPROCESSED, metavar="BUNDLE.bc [OBJECTS, LIBRARIES, FLAGS]... -o APP")
@click.pass_context
def link_command(ctx: click.Context, arguments: tuple[str, ...]) -> None:
    settings = {"output": None, "clang": None, "cuda_path": None, "rocm_path": None,
                "dry_run": False, "verbose": False, "ptx": [], "ptx_beside": False}
    passthrough: list[str] = []
    items = list(arguments)
    while items:
        item = items.pop(0)
        name, _, inline = item.partition("=")
        if item in ("-h", "--help"):
            click.echo(ctx.get_help())
            ctx.exit(0)
        elif name == "--ptx" and (inline or (not _ and items and not items[0].startswith("-"))):
            settings["ptx"].append(inline if _ else items.pop(0))
        elif name == "--ptx":
            raise click.UsageError("option '--ptx' requires a value", ctx)
        elif name in LINK_VALUE_OPTIONS and (inline or (not _ and items)):
            settings[LINK_VALUE_OPTIONS[name]] = inline if _ else items.pop(0)
        elif name in LINK_VALUE_OPTIONS:
            raise click.UsageError(f"option '{name}' requires a value", ctx)
        elif item in LINK_FLAGS:
            settings[LINK_FLAGS[item]] = True
        else:
            passthrough.append(item)
    positional = [a for a in passthrough if not a.startswith("-")]
    if not positional:
        raise click.UsageError("missing argument 'BUNDLE.bc'", ctx)
    if settings["output"] is None:
        raise click.UsageError("missing option '-o'", ctx)
    from offload.fsutil import refuse_input_as_output

    refuse_input_as_output(settings["output"], positional)  # clang would overwrite the bundle or an object
    for item in positional:
        if item.endswith((".mlir", ".mlirbc")):
            raise OffloadError(f"'{item}' is an MLIR program, not a bundle: compile it first "
                               f"(mlir-offload compile {item} --offload-arch ARCH -o BUNDLE.bc)")
    from offload.linking import find_bundles, link_bundle

    link_bundle(find_bundles(passthrough), passthrough, settings["output"], clang=settings["clang"],
                cuda_path=settings["cuda_path"], rocm_path=settings["rocm_path"], dry_run=settings["dry_run"],
                verbose=settings["verbose"], ptx=settings["ptx"], ptx_beside=settings["ptx_beside"])


COMMANDS = [compile_command, link_command]
__all__ = ["COMMANDS", "OffloadError"]
