"""`compile` (MLIR program -> one host bundle) and `link` (bundle -> executable with the target's clang)."""

from __future__ import annotations

import click

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
def compile_command(input_path: str, output: str, textual: bool, target_clang: str | None,
                    **device_kwargs) -> None:
    """Compile IN.mlir into one self-contained host bundle for `clang --offload-new-driver`."""
    from offload.fsutil import atomic_write
    from offload.pipeline import compile_bundle
    from offload.profiles import load_profile

    load_profile(target_clang)  # an unknown --target-clang fails before any work
    targets, options = device_settings(**device_kwargs)
    check_output_name(output, target_clang, textual)
    data = compile_bundle(input_path, targets, options, target_clang, emit="ll" if textual else "bc")
    atomic_write(output, data)


def check_output_name(output: str, target_clang, textual: bool) -> None:
    """A bundle for a clang that cannot read our bitcode is an ELF object: clang picks an input's language
    from its suffix, so such a bundle named .bc would be misread at link time."""
    from offload.pipeline import plan_host_format

    if not textual and plan_host_format(target_clang) == "obj" and output.endswith((".bc", ".ll")):
        raise OffloadError(f"a bundle for clang {target_clang} is an ELF object (that clang cannot read LLVM "
                           f"bitcode this new): name the output .o, not '{output}'")


@click.command("link", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": True})
@click.argument("bundle", metavar="BUNDLE.bc", type=click.Path(dir_okay=False))
@click.argument("inputs", nargs=-1, type=click.UNPROCESSED, metavar="[OBJECTS, LIBRARIES, CLANG FLAGS]...")
@click.option("-o", "output", required=True, type=click.Path(dir_okay=False), help="Output executable.")
@click.option("--clang", "clang", default=None, metavar="PATH",
              help="The clang to link with (default: clang-N for the bundle's profile N, then clang).")
@click.option("--cuda-path", "cuda_path", default=None, metavar="DIR", help="CUDA toolkit (default: found).")
@click.option("--rocm-path", "rocm_path", default=None, metavar="DIR", help="ROCm (default: found).")
@click.option("--dry-run", "dry_run", is_flag=True, help="Print the clang command instead of running it.")
@click.option("-v", "verbose", is_flag=True, help="Print the clang command before running it.")
def link_command(bundle: str, inputs: tuple[str, ...], output: str, clang: str | None, cuda_path: str | None,
                 rocm_path: str | None, dry_run: bool, verbose: bool) -> None:
    """Link BUNDLE.bc (and objects, libraries, clang flags) into an executable with the target's clang."""
    from offload.linking import link_bundle

    link_bundle(bundle, list(inputs), output, clang=clang, cuda_path=cuda_path, rocm_path=rocm_path,
                dry_run=dry_run, verbose=verbose)


COMMANDS = [compile_command, link_command]
__all__ = ["COMMANDS", "OffloadError"]
