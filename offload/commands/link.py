"""Command `link`: bundles, objects and flags -> an executable, through the target's clang."""

from __future__ import annotations

from dataclasses import dataclass, field

import click

from offload.errors import OffloadError
from offload.formats.vendors import runtime_modes

LINK_HELP = """Link bundles (and objects, libraries, clang flags) into an executable with the target's clang.

\b
Every input file with an mlir-offload record is a bundle: each is checked against the clang (entry
layout, bitcode it can read), and all must be made for the same clang. Other inputs go to clang.
\b
Options of link itself (every other argument goes to clang unchanged):
  -o APP            output executable (default: a.out, as clang's and nvcc's)
  --clang PATH      the clang to link with (default: clang-N of the bundles' profile N, then clang)
  --cuda-path DIR   CUDA toolkit (default: found)
  --rocm-path DIR   ROCm (default: found)
  --ptx FILE        add this PTX (from `compile --portable`: BUNDLE.<arch>.ptx) to the executable's fatbin
                    beside the arch's cubin, so newer GPUs JIT-compile it (repeat per arch; CUDA)
  --ptx-beside      add the PTX files compile wrote beside each bundle (BUNDLE.<arch>.ptx, where they
                    exist and are not older than it; none for an arch several bundles have PTX for)
  --cudart MODE     the runtime library as nvcc's --cudart: shared (default, libcudart.so), static
                    (libcudart_static.a + -ldl -lpthread -lrt), none; an explicit -lcudart_static (or
                    -lcudart) on the command line is used as given, without a second runtime
  --emulate         an executable that runs the kernels on this CPU (no GPU, driver or toolkit): the
                    bundle's device bitcode retargeted to the host, its host code linked with mlir-offload's
                    emulation runtime instead of libcudart/libamdhip64 (docs/emulator.md); CUDA/HIP objects
                    of clang (-fgpu-rdc --offload-new-driver -foffload-lto) join with their device bitcode
  --sanitize[=LIST] with --emulate: check every device memory access, barrier and allocation while the
                    program runs (memcheck, racecheck, initcheck, synccheck, leakcheck, or all; default
                    all but leakcheck;
                    docs/emulator.md); a bundle compiled with --sanitize asks for it itself
  --sanitize-keep-going  report each distinct error once and go on (exit status 1 at the end)
  --dry-run, -###   print the clang command instead of running it (nothing is built)
  -v                print the clang command (and clang's messages) while running it
  -G                device debug information (as nvcc -G): the device link keeps it and does not
                    optimize (ptxas -g); a bundle compiled with -G asks for it itself
  --resource-usage  print registers, spills, stack and shared memory per kernel and arch (as nvcc's;
                    from ptxas -v, which runs at link for bitcode bundles)
  --serial-device-link  the device link on one thread: no archs side by side, LTO partitions or ptxas
                    --split-compile (CUDA). The same kernel code in less CPU time (200 kernels:
                    about 0.2 to 0.3 s of 2.3 to 2.5 s), more wall time on idle cores: for `make -j`
                    on a busy machine
\b
Clang options that take a separate argument keep it (`-Xlinker -rpath`, `-L DIR`, `-Xarch_device -g`).
`-Xcuda-ptxas -v` reaches ptxas (as -Xoffload-linker -v: clang's linker wrapper runs ptxas itself).
"""
DEFAULT_EXECUTABLE = "a.out"
CUDART_MODES = runtime_modes()  # nvcc's --cudart names, from the vendor records
LINK_VALUE_OPTIONS = {
    "--cudart": "runtime_mode",
    "-o": "output",
    "--clang": "clang",
    "--cuda-path": "cuda_path",
    "--rocm-path": "rocm_path",
}
LINK_FLAGS = {
    "--dry-run": "dry_run",
    "-###": "dry_run",
    "--dryrun": "dry_run",
    "-v": "verbose",
    "--ptx-beside": "ptx_beside",
    "--resource-usage": "resource_usage",
    "--emulate": "emulate",
    "--sanitize-keep-going": "sanitize_keep_going",
    "-G": "device_debug",
    "--device-debug": "device_debug",
    "--serial-device-link": "serial_device_link",
}


@dataclass
class LinkSettings:
    """link's own options, as the argument loop reads them (LINK_VALUE_OPTIONS and LINK_FLAGS name the fields)."""

    runtime_mode: str = "shared"
    output: str | None = None
    clang: str | None = None
    cuda_path: str | None = None
    rocm_path: str | None = None
    dry_run: bool = False
    verbose: bool = False
    resource_usage: bool = False
    ptx: list[str] = field(default_factory=list)
    ptx_beside: bool = False
    emulate: bool = False
    device_debug: bool = False
    serial_device_link: bool = False
    sanitize: tuple[str, ...] = ()
    sanitize_keep_going: bool = False


# Clang flags pass through untouched, so click must not parse them (it would split -L/x/h into -L -h ...).
@click.command(
    "link",
    help=LINK_HELP,
    add_help_option=False,
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
)
@click.argument(
    "arguments", nargs=-1, type=click.UNPROCESSED, metavar="BUNDLE.bc [OBJECTS, LIBRARIES, FLAGS]... -o APP"
)
@click.pass_context
def link_command(ctx: click.Context, arguments: tuple[str, ...]) -> None:
    settings = LinkSettings()
    from offload.foreign_options import translate_link
    from offload.formats.clang_arguments import input_files, takes_separate_argument

    passthrough: list[str] = []
    items = translate_link(list(arguments))
    while items:
        item = items.pop(0)
        name, _, inline = item.partition("=")
        if item in ("-h", "--help"):
            click.echo(ctx.get_help())
            ctx.exit(0)
        elif name == "--ptx" and (inline or (not _ and items and not items[0].startswith("-"))):
            settings.ptx.append(inline if _ else items.pop(0))
        elif name == "--ptx":
            raise click.UsageError("option '--ptx' requires a value", ctx)
        elif name in LINK_VALUE_OPTIONS and (inline or (not _ and items)):
            setattr(settings, LINK_VALUE_OPTIONS[name], inline if _ else items.pop(0))
        elif name in LINK_VALUE_OPTIONS:
            raise click.UsageError(f"option '{name}' requires a value", ctx)
        elif name == "--sanitize":
            from offload.formats.sanitizers import DEFAULT, sanitizer_list

            settings.sanitize = sanitizer_list(inline if _ else DEFAULT)
        elif item in LINK_FLAGS:
            setattr(settings, LINK_FLAGS[item], True)
        elif takes_separate_argument(item) and items:
            passthrough += [item, items.pop(0)]  # clang's two-word option: its argument is never link's
        else:
            passthrough.append(item)
    if settings.runtime_mode not in CUDART_MODES:
        raise click.UsageError(f"--cudart must be one of {', '.join(CUDART_MODES)}, got '{settings.runtime_mode}'", ctx)
    positional = input_files(passthrough)
    if not positional:
        raise click.UsageError("missing argument 'BUNDLE.bc'", ctx)
    if settings.output is None:
        settings.output = DEFAULT_EXECUTABLE  # as clang and nvcc name an executable without -o
    from offload.fsutil import check_output, refuse_input_as_output

    refuse_input_as_output(settings.output, positional)  # clang would overwrite the bundle or an object
    check_output(settings.output)
    if not settings.dry_run:
        from offload.fsutil import refuse_binary_to_terminal

        refuse_binary_to_terminal(settings.output, "an executable")
    for item in positional:
        if item.endswith((".mlir", ".mlirbc")):
            raise OffloadError(
                f"'{item}' is an MLIR program, not a bundle: compile it first "
                f"(mlir-offload compile {item} --offload-arch ARCH -o BUNDLE.bc)"
            )
    from offload.compiler.textual_ir import read_offload_images
    from offload.toolchain.link import find_bundles, link_bundle

    if (settings.sanitize or settings.sanitize_keep_going) and not settings.emulate:
        raise click.UsageError("--sanitize runs its checks in the CPU emulator: add --emulate", ctx)
    if settings.emulate:
        from offload.toolchain.emulate import Sanitize, link_emulated

        for name in (
            "ptx",
            "ptx_beside",
            "cuda_path",
            "rocm_path",
            "resource_usage",
            "device_debug",
            "serial_device_link",
        ):
            if getattr(settings, name):
                raise click.UsageError(f"--{name.replace('_', '-')} is for a GPU executable, not with --emulate", ctx)
        link_emulated(
            emulated_bundles(passthrough),
            passthrough,
            settings.output,
            clang=settings.clang,
            dry_run=settings.dry_run,
            verbose=settings.verbose,
            sanitize=Sanitize(settings.sanitize, settings.sanitize_keep_going),
        )
        return

    # Where LLVM is, a text input that is no bundle gets LLVM's located reading error.
    link_bundle(
        find_bundles(passthrough, read_offload_images),
        passthrough,
        settings.output,
        clang=settings.clang,
        cuda_path=settings.cuda_path,
        rocm_path=settings.rocm_path,
        dry_run=settings.dry_run,
        verbose=settings.verbose,
        ptx=settings.ptx,
        ptx_beside=settings.ptx_beside,
        cudart=settings.runtime_mode,
        resource_usage=settings.resource_usage,
        device_debug=settings.device_debug,
        serial_device_link=settings.serial_device_link,
    )


def emulated_bundles(arguments: list[str]) -> list:
    """The bundles of an emulated link; none where CUDA/HIP objects of clang's offload driver bring the
    kernels (`link --emulate main.o scale.o`)."""
    import os

    from offload.compiler.textual_ir import read_offload_images
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
