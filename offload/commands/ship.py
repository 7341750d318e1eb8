"""Command `ship`: an archive a target machine builds with clang and make alone."""

from __future__ import annotations

import os

import click

from offload.errors import OffloadError
from offload.formats.vendors import vendor_for

@click.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.argument("input_path", metavar="IN.mlir|BUNDLE", type=click.Path(dir_okay=False))
@click.option("-o", "output", required=True, type=click.Path(dir_okay=False), help="the archive, APP.tar.gz")
@click.option("--app", default=None, help="executable name on the target (default: the archive's name)")
@click.pass_context
def ship(ctx: click.Context, input_path: str, output: str, app: str | None) -> None:
    """Archive a bundle with a manifest and a generated Makefile + build.sh that link and verify it on a
    machine with only clang, the vendor toolkit and make.

    IN.mlir is compiled first with `mlir-offload compile` and every other flag given here
    (--offload-arch, -O, --portable, --target-clang, ...); a bundle (.offload.bc / .offload.o) is
    shipped as it is, with the PTX files compile wrote beside it (BUNDLE.<arch>.ptx)."""
    import subprocess
    import sys
    import tempfile

    from offload.fsutil import atomic_write, read_input
    from offload.toolchain.ship import build_archive

    from offload.fsutil import STDOUT, refuse_input_as_output

    if output == STDOUT:
        raise OffloadError("ship writes an archive file: name it with -o APP.tar.gz, not '-' (standard output)")
    refuse_input_as_output(output, [input_path])
    from offload.toolchain.ship import check_app_name

    if app is not None:
        name = check_app_name(app, "--app")
    else:
        name = check_app_name(os.path.basename(output).removesuffix(".gz").removesuffix(".tar")
                              .removesuffix(".tgz"), f"the archive name '{output}'")
    flags = list(ctx.args)
    if input_path.endswith(".mlir") or input_path.endswith(".mlirbc"):
        read_input(input_path)
        with tempfile.TemporaryDirectory(prefix="mlir-offload-ship-") as tmp:
            bundle_path = os.path.join(tmp, "bundle")
            done = subprocess.run([sys.executable, "-m", "offload", "compile", input_path, "-o", bundle_path,
                                   *flags], capture_output=True, text=True)
            if done.returncode != 0:
                click.echo(done.stderr.rstrip("\n"), err=True)
                ctx.exit(done.returncode)
            bundle = read_input(bundle_path)
            ptx = {}
            for entry in sorted(os.listdir(tmp)):  # PTX kept beside the bundle (--device-image=ptx)
                if entry.startswith("bundle.") and entry.endswith(".ptx"):
                    with open(os.path.join(tmp, entry), encoding="utf-8") as f:
                        ptx[entry[len("bundle."):-len(".ptx")]] = f.read()
    else:
        if flags:
            raise click.UsageError(f"compile flags ({' '.join(flags)}) only apply to an .mlir input")
        bundle, ptx = read_input(input_path), {}
        from offload.compiler.textual_ir import read_offload_images

        try:  # unreadable: an error naming the user's file, not the archive's member
            images = read_offload_images(bundle, input_path)
        except OffloadError as e:
            raise OffloadError(f"{e.message} (not a bundle: ship takes IN.mlir or what mlir-offload compile wrote)",
                               e.location) from None
        if not images:
            raise OffloadError(f"'{input_path}' contains no offloading images (not a bundle: ship takes IN.mlir or "
                               "what mlir-offload compile wrote)")
        from offload.toolchain.link import ptx_files_beside

        for path in ptx_files_beside(input_path, images):  # <bundle>.<arch>.ptx from compile --device-image=ptx
            ptx[path.rsplit(".", 2)[-2]] = read_input(path).decode("utf-8", errors="replace")
    from offload.packager.detect import is_bitcode

    bundle_name = f"{name}.offload.{'bc' if is_bitcode(bundle) else 'o'}"
    atomic_write(output, build_archive(name, bundle, bundle_name, flags, ptx))
    from offload.toolchain.ship import read_manifest

    manifest = read_manifest(output)
    toolkit = vendor_for(manifest["targets"][0]["offload_kind"]).toolkit_variable
    click.echo(f"{output}: {name} ({bundle_name}); on the target: tar xzf {os.path.basename(output)} && "
               f"make -C {name} [CLANG=clang-{manifest['entry_profile']}] [{toolkit}=...]")


COMMAND = ship
