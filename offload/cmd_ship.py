"""Commands `ship` (an archive a target machine builds with clang and make alone), `config` (project
settings, link flags) and `doctor` (can this machine link a bundle?)."""

from __future__ import annotations

import os

import click

from offload.errors import OffloadError


# ---- config --------------------------------------------------------------------------------------

def _setting_options(function):
    """One option per mlir-offload.toml key (the keys are flag names), all defaulting to None."""
    from offload.config import KEYS, _bool

    for spec in reversed(KEYS):
        if spec.check is _bool:
            option = click.option(f"--{spec.name}/--no-{spec.name}", default=None, help=spec.help)
        elif spec.name == "link-bitcode":
            option = click.option(f"--{spec.name}", multiple=True, default=(), help=spec.help)
        elif spec.name in ("opt-level", "target-clang"):
            option = click.option(f"--{spec.name}", type=int, default=None, help=spec.help)
        else:
            option = click.option(f"--{spec.name}", default=None, help=spec.help)
        function = option(function)
    return function


@click.group(invoke_without_command=True)
@click.option("--cflags", is_flag=True, help="flags clang needs to compile CUDA/HIP sources for the bundle's link")
@click.option("--ldflags", is_flag=True, help="flags clang needs to link a bundle (like llvm-config --ldflags)")
@click.option("--offload-kind", type=click.Choice(["cuda", "hip"]), default=None,
              help="runtime of the link (default: from offload-arch, else cuda)")
@click.option("--mk", is_flag=True, help="path of mlir-offload.mk (for a Makefile's include)")
@click.option("--cmake-dir", is_flag=True, help="folder of MLIROffload.cmake (for CMAKE_MODULE_PATH)")
@click.pass_context
def config(ctx: click.Context, cflags: bool, ldflags: bool, offload_kind: str | None, mk: bool,
           cmake_dir: bool) -> None:
    """Project settings (mlir-offload.toml) and the flags a target link needs."""
    if mk or cmake_dir:
        from importlib import resources

        data = resources.files("offload.toolchain_data")
        click.echo(str(data.joinpath("mlir-offload.mk") if mk else data.joinpath("cmake")))
        return
    if ctx.invoked_subcommand is not None:
        if cflags or ldflags:
            raise click.UsageError("--cflags/--ldflags do not combine with a subcommand")
        return
    if not (cflags or ldflags):
        click.echo(ctx.get_help())
        return
    from offload import config as project

    from offload.doctor import find_cuda, find_rocm
    from offload.linking import RUNTIME_LINK

    settings = project.resolve({}, None)
    kind = offload_kind or _offload_kind_of(settings["offload-arch"].value)
    spec = RUNTIME_LINK[kind]
    if kind == "cuda":
        toolkit = find_cuda(settings["cuda-path"].value)
        root = toolkit.root if toolkit else None
    else:
        root = find_rocm(settings["rocm-path"].value).root
    if root is None:
        raise OffloadError(f"no {'CUDA toolkit' if kind == 'cuda' else 'ROCm'} found: set "
                           f"{'cuda-path' if kind == 'cuda' else 'rocm-path'} in mlir-offload.toml")
    library_dir = next((os.path.join(root, d) for d in spec["library_dirs"] if os.path.isdir(os.path.join(root, d))),
                       os.path.join(root, spec["library_dirs"][0]))
    toolkit_flag = f"{spec['path_flag']}={root}"
    cflag_list = ["--offload-new-driver", "-fgpu-rdc", toolkit_flag, *spec["quiet"]]
    ldflag_list = ["--offload-new-driver", toolkit_flag, f"-L{library_dir}", *spec["quiet"], f"-l{spec['library']}"]
    words = (cflag_list if cflags else []) + (ldflag_list if ldflags else [])
    click.echo(" ".join(_shell_word(w) for w in words))


def _offload_kind_of(archs: str | None) -> str:
    if archs and all(a.strip().startswith("gfx") for a in archs.split(",")):
        return "hip"
    return "cuda"


def _shell_word(word: str) -> str:
    import shlex

    return shlex.quote(word)


@config.command("show")
@click.argument("input", required=False, type=click.Path(dir_okay=True))
@_setting_options
def config_show(input: str | None, **flags) -> None:
    """Print every effective setting and where it came from (flag, file:line, default).

    INPUT (a file or folder, default: the current folder) is where the search for mlir-offload.toml
    starts; it walks up to the root. The output is itself a valid mlir-offload.toml."""
    from offload import config as project

    start = input if input is not None else os.getcwd()
    found = project.find_config(start)
    loaded = project.load_config(found) if found else None
    settings = project.resolve(flags, start, loaded)
    click.echo(f"# configuration file: {found if found else 'none (searched from ' + str(start) + ' up)'}")
    rows = []
    for key, setting in settings.items():
        value = project.render_toml_value(setting.value)
        text = f"{key} = {value}" if value else f"# {key} = (unset)"
        rows.append((text, setting.origin))
    width = max(len(t) for t, _ in rows)
    for text, origin in rows:
        click.echo(f"{text.ljust(width)}  # {origin}")


# ---- doctor --------------------------------------------------------------------------------------

@click.command()
@click.option("--bundle", "bundle", type=click.Path(), default=None,
              help="a shipped archive (.tar.gz) or an unpacked one (its folder or manifest.json)")
@click.option("--clang", "clangs", multiple=True, help="a clang to consider besides those found")
@click.option("--cuda-path", default=None, help="CUDA toolkit to use (default: found)")
@click.option("--rocm-path", default=None, help="ROCm install to use (default: found)")
@click.pass_context
def doctor(ctx: click.Context, bundle: str | None, clangs: tuple[str, ...], cuda_path: str | None,
           rocm_path: str | None) -> None:
    """What this machine has for linking bundles; with --bundle, whether it can link that one.

    Exits 1 when no clang here can link the bundle (or, without --bundle, when there is no usable clang)."""
    from offload import doctor as doc

    found = doc.find_clangs(list(clangs))
    cuda = doc.find_cuda(cuda_path)
    rocm = doc.find_rocm(rocm_path)
    for line in doc.report_machine(found, cuda, rocm) + doc.report_compiler():
        click.echo(line)
    if bundle is None:
        if not any(c.linker_wrapper for c in found):
            click.echo("no clang with clang-linker-wrapper: this machine cannot link bundles "
                       "(fix: install clang-22 and clang-tools-22)")
            ctx.exit(1)
        return
    from offload.ship import read_bundle_needs

    needs, wrapper_shipped = read_bundle_needs(bundle)
    click.echo(f"bundle {needs.name}: entry profile clang {needs.entry_profile}, producer LLVM "
               f"{needs.producer_llvm}, {', '.join(needs.offload_kinds)} {', '.join(needs.archs)}, "
               f"device images {needs.device_image}, host {needs.host_format}")
    candidates = [c for c in (clangs and [doc.describe_clang(c) for c in clangs] or found) if c] or [None]
    usable = None
    for clang in candidates:
        findings = doc.bundle_findings(needs, clang, cuda, rocm, wrapper_shipped)
        blocking = [f for f in findings if f.blocking]
        name = f"clang {clang.version} ({clang.path})" if clang else "clang"
        click.echo(f"{name}: {'can link it' if not blocking else 'cannot link it'}")
        for f in findings:
            click.echo(f"  {'problem' if f.blocking else 'note'}: {f.problem}")
            click.echo(f"    fix: {f.fix}")
        if not blocking and usable is None:
            usable = clang
    if usable is None:
        click.echo(f"this machine cannot link {needs.name}")
        ctx.exit(1)
    click.echo(f"this machine can link {needs.name}: make CLANG={usable.path}")


# ---- ship ----------------------------------------------------------------------------------------

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
    from offload.ship import build_archive

    from offload.fsutil import STDOUT, refuse_input_as_output

    if output == STDOUT:
        raise OffloadError("ship writes an archive file: name it with -o APP.tar.gz, not '-' (standard output)")
    refuse_input_as_output(output, [input_path])
    name = app or os.path.basename(output).removesuffix(".gz").removesuffix(".tar").removesuffix(".tgz")
    if not name or "/" in name or name.startswith("."):
        raise OffloadError(f"cannot name the app after '{output}': pass --app NAME")
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
        from offload.packager import read_offload_images

        try:  # unreadable: an error naming the user's file, not the archive's member
            images = read_offload_images(bundle, input_path)
        except OffloadError as e:
            raise OffloadError(f"{e.message} (not a bundle: ship takes IN.mlir or what mlir-offload compile wrote)",
                               e.location) from None
        from offload.linking import ptx_files_beside

        for path in ptx_files_beside(input_path, images):  # <bundle>.<arch>.ptx from compile --device-image=ptx
            ptx[path.rsplit(".", 2)[-2]] = read_input(path).decode("utf-8", errors="replace")
    from offload.packager.detect import is_bitcode

    bundle_name = f"{name}.offload.{'bc' if is_bitcode(bundle) else 'o'}"
    atomic_write(output, build_archive(name, bundle, bundle_name, flags, ptx))
    from offload.ship import read_manifest

    toolkit = "ROCM_PATH" if read_manifest(output)["targets"][0]["offload_kind"] == "hip" else "CUDA_PATH"
    click.echo(f"{output}: {name} ({bundle_name}); on the target: tar xzf {os.path.basename(output)} && "
               f"make -C {name} [CLANG=clang] [{toolkit}=...]")


COMMANDS = [config, doctor, ship]
