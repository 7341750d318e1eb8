"""Command `ship`: an archive a target machine builds with clang and make alone."""

from __future__ import annotations

import os

import click

from offload.errors import OffloadError
from offload.formats.vendors import vendor_for


class ShipCommand(click.Command):
    """ship's own options (-o, --app, -h) are read here; every other word goes to compile as written, so
    click never reads nvcc's -arch=sm_80 as -a -r -c -h (help)."""

    OWN_VALUE_OPTIONS = ("-o", "--app")

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        own: list[str] = []
        others: list[str] = []
        words = list(args)
        while words:
            word = words.pop(0)
            name = word.partition("=")[0]
            if word in ("-h", "--help") or name in self.OWN_VALUE_OPTIONS and "=" in word:
                own.append(word)
            elif word in self.OWN_VALUE_OPTIONS:
                own += [word, *words[:1]]
                del words[:1]
            elif word.startswith("-o") and not word.startswith("--") and len(word) > 2:
                own.append(word)  # -oAPP.tar.gz
            else:
                others.append(word)
        return super().parse_args(ctx, [*own, "--", *others] if others else own)


@click.command(cls=ShipCommand)
@click.argument(
    "arguments", nargs=-1, required=True, type=click.UNPROCESSED, metavar="IN.mlir [COMPILE FLAGS] | BUNDLE..."
)
@click.option("-o", "output", required=True, type=click.Path(), help="the archive, APP.tar.gz")
@click.option("--app", default=None, help="executable name on the target (default: the archive's name)")
@click.pass_context
def ship(ctx: click.Context, arguments: tuple[str, ...], output: str, app: str | None) -> None:
    """Archive bundles with a manifest and a generated Makefile + build.sh that link and verify them on a
    machine with only clang, the vendor toolkit and make.

    IN.mlir is compiled first with `mlir-offload compile` and every other flag given here
    (--offload-arch, -O, --portable, --target-clang, ...); bundles (.offload.bc / .offload.o) are
    shipped as they are, several making one app (one executable linking them all), with the PTX files
    compile wrote beside a bundle (BUNDLE.<arch>.ptx)."""
    import subprocess
    import sys

    from offload.fsutil import STDOUT, atomic_write, read_input, refuse_input_as_output
    from offload.interrupts import temporary_folder
    from offload.toolchain.ship import build_archive

    if output == STDOUT:
        raise OffloadError("ship writes an archive file: name it with -o APP.tar.gz, not '-' (standard output)")
    input_path, flags = arguments[0], list(arguments[1:])
    is_program = input_path.endswith(".mlir") or input_path.endswith(".mlirbc")
    more_bundles = [] if is_program else flags
    if not is_program:
        flags = [word for word in more_bundles if word.startswith("-")]
        if flags:
            raise click.UsageError(f"compile flags ({' '.join(flags)}) only apply to an .mlir input")
    refuse_input_as_output(output, [input_path, *more_bundles])
    from offload.toolchain.ship import check_app_name

    if app is not None:
        name = check_app_name(app, "--app")
    else:
        name = check_app_name(
            os.path.basename(output).removesuffix(".gz").removesuffix(".tar").removesuffix(".tgz"),
            f"the archive name '{output}'",
        )
    if is_program:
        read_input(input_path)
        from offload.fsutil import check_outputs

        # The compile's own side files named here (-MF, -ftime-trace=FILE) are outputs of this command too.
        check_outputs([output, *compile_side_files(input_path, flags)], [input_path])
        with temporary_folder("mlir-offload-ship-") as tmp:
            bundle_path = os.path.join(tmp, "bundle")
            done = subprocess.run(
                [sys.executable, "-m", "offload", "compile", input_path, "-o", bundle_path, *flags],
                capture_output=True,
                text=True,
            )
            if done.returncode != 0:
                click.echo(done.stderr.rstrip("\n"), err=True)
                ctx.exit(done.returncode)
            bundle = read_input(bundle_path)
            ptx = {}
            for entry in sorted(os.listdir(tmp)):  # PTX kept beside the bundle (--device-image=ptx)
                if entry.startswith("bundle.") and entry.endswith(".ptx"):
                    with open(os.path.join(tmp, entry), encoding="utf-8") as f:
                        ptx[entry[len("bundle.") : -len(".ptx")]] = f.read()
    else:
        bundle, ptx = read_shipped_bundle(input_path)
    from offload.packager.detect import is_bitcode

    suffix = lambda data: "bc" if is_bitcode(data) else "o"  # noqa: E731
    if not more_bundles:
        bundle_name = f"{name}.offload.{suffix(bundle)}"
        atomic_write(output, build_archive(name, bundle, bundle_name, flags, ptx), inputs=[input_path])
    else:  # each bundle under its own name: <stem>.offload.bc
        bundles = [(input_path, bundle, ptx), *((path, *read_shipped_bundle(path)) for path in more_bundles)]
        named = [(f"{bundle_stem(path)}.offload.{suffix(data)}", data, path_ptx) for path, data, path_ptx in bundles]
        for (_, _, path_ptx), (path, _, _) in zip(named, bundles, strict=True):
            if path_ptx:
                raise OffloadError(
                    f"{path}: PTX beside it ({', '.join(sorted(path_ptx))}), but an app of several "
                    "bundles cannot ship PTX (a newer GPU JIT-compiles one PTX image per arch, "
                    "which would lack the other bundles' kernels): compile them with "
                    "--device-image=cubin or bitcode"
                )
        bundle_name = named[0][0]
        atomic_write(
            output,
            build_archive(
                name, bundle, bundle_name, flags, {}, [(bundle_name_, data) for bundle_name_, data, _ in named[1:]]
            ),
            inputs=[input_path, *more_bundles],
        )
        bundle_name = " ".join(n for n, _, _ in named)
    from offload.toolchain.ship import read_manifest

    manifest = read_manifest(output)
    toolkit = vendor_for(manifest["targets"][0]["offload_kind"]).toolkit_variable
    click.echo(
        f"{output}: {name} ({bundle_name}); on the target: tar xzf {os.path.basename(output)} && "
        f"make -C {name} [CLANG=clang-{manifest['entry_profile']}] [{toolkit}=...]"
    )


def read_shipped_bundle(path: str) -> tuple[bytes, dict[str, str]]:
    """A bundle's bytes and the PTX compile wrote beside it (arch -> text)."""
    from offload.driver.textual_ir import read_offload_images
    from offload.fsutil import read_input

    bundle, ptx = read_input(path), {}
    try:  # unreadable: an error naming the user's file, not the archive's member
        images = read_offload_images(bundle, path)
    except OffloadError as e:
        raise OffloadError(
            f"{e.message} (not a bundle: ship takes IN.mlir or what mlir-offload compile wrote)", e.location
        ) from None
    if not images:
        raise OffloadError(
            f"'{path}' contains no offloading images (not a bundle: ship takes IN.mlir or "
            "what mlir-offload compile wrote)"
        )
    from offload.toolchain.link import ptx_files_beside

    for beside in ptx_files_beside(path, images):  # <bundle>.<arch>.ptx from compile --device-image=ptx
        ptx[beside.rsplit(".", 2)[-2]] = read_input(beside).decode("utf-8", errors="replace")
    return bundle, ptx


def bundle_stem(path: str) -> str:
    """a/saxpy.offload.bc -> saxpy: the name a bundle of several gets in the archive."""
    name = os.path.basename(path)
    for suffix in (".offload.bc", ".offload.o", ".offload.ll", ".bc", ".o"):
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


COMMAND = ship


def compile_side_files(input_path: str, flags: list[str]) -> list[str]:
    """The files besides the bundle that `compile INPUT FLAGS` names on its command line (-MF FILE,
    -ftime-trace=FILE), read by compile's own parser; flags it rejects are its own error later."""
    from offload.driver.program import compile_words_context

    try:
        context = compile_words_context([input_path, "-o", "bundle", *flags])
    except click.ClickException:
        return []
    named = (context.params.get("dependency_file"), context.params.get("time_trace"))
    return [path for path in named if path]
