"""Command `config`: project settings (mlir-offload.toml) and the flags a target link needs."""

from __future__ import annotations

import os

import click

from offload.data import data_path
from offload.errors import OffloadError
from offload.formats.vendors import runtime_link_flags, vendor_for
from offload.options import LINK_SPECS, SPECS, TOML_SPECS, command_options, given_flags, resolve, resolve_link
from offload.options.spec import given_flags as given_table_flags


@click.group(invoke_without_command=True)
@click.option("--cflags", is_flag=True, help="flags clang needs to compile CUDA/HIP sources for the bundle's link")
@click.option("--ldflags", is_flag=True, help="flags clang needs to link a bundle (like llvm-config --ldflags)")
@click.option(
    "--offload-kind",
    type=click.Choice(["cuda", "hip"]),
    default=None,
    help="runtime of the link (default: from offload-arch, else cuda)",
)
@click.option(
    "--clang",
    "clang",
    is_flag=True,
    help="the clang that links the project's bundles, by link's rule: clang in mlir-offload.toml, else clang-N of "
    "the target clang N (target-clang in mlir-offload.toml, default 22), else /usr/lib/llvm-N/bin/clang, else clang",
)
@click.option(
    "--target-clang",
    "target_clang",
    default=None,
    metavar="N",
    help="with --clang: the bundles' target clang instead of mlir-offload.toml's",
)
@click.option("--mk", is_flag=True, help="path of mlir-offload.mk (for a Makefile's include)")
@click.option("--cmake-dir", is_flag=True, help="folder of MLIROffload.cmake (for CMAKE_MODULE_PATH)")
@click.pass_context
def config(
    ctx: click.Context,
    cflags: bool,
    ldflags: bool,
    offload_kind: str | None,
    mk: bool,
    cmake_dir: bool,
    clang: bool,
    target_clang: str | None,
) -> None:
    """Project settings (mlir-offload.toml) and the flags a target link needs."""
    if clang:
        from offload.config import project_config
        from offload.formats.profiles import load_profile
        from offload.toolchain.tools import find_target_clang

        project = project_config(None)
        major = load_profile(target_clang).clang_major if target_clang else resolve({}, project).options.target_clang
        click.echo(find_target_clang(resolve_link({}, project).options.clang, major).path)
        return
    if mk or cmake_dir:
        click.echo(data_path("mlir-offload.mk") if mk else data_path("cmake"))
        return
    if ctx.invoked_subcommand is not None:
        if cflags or ldflags:
            raise click.UsageError("--cflags/--ldflags do not combine with a subcommand")
        return
    if not (cflags or ldflags):
        click.echo(ctx.get_help())
        return
    from offload.config import project_config
    from offload.toolchain.tools import toolkit_root

    project = project_config(None)
    settings = resolve({}, project).options
    kind = offload_kind or _offload_kind_of(settings.offload_arch)
    spec = vendor_for(kind)
    root = toolkit_root(spec, getattr(resolve_link({}, project).options, spec.toolkit_key.replace("-", "_")))
    if root is None:
        raise OffloadError(f"no {spec.toolkit_name} found: set {spec.toolkit_key} in mlir-offload.toml")
    from offload.formats.hosts import build_machine_host, resolve_host
    from offload.toolchain.tools import runtime_library_dirs

    # host-triple of mlir-offload.toml: the runtime library of that CPU, and a cross --target when it is not ours.
    host = resolve_host(settings.host_triple)
    folders = runtime_library_dirs(spec, host)
    library_dir = next(
        (os.path.join(root, d) for d in folders if os.path.isdir(os.path.join(root, d))), os.path.join(root, folders[0])
    )
    target = [] if host is build_machine_host() else [f"--target={host.name}"]
    toolkit_flag = f"{spec.toolkit_path_flag}={root}"
    cflag_list = [
        *target,
        "--offload-new-driver",
        "-fgpu-rdc",
        *spec.source_device_link_flags,
        toolkit_flag,
        *header_gap_flags(spec, root),
        *spec.quiet_flags,
    ]
    ldflag_list = [*target, "--offload-new-driver", *runtime_link_flags(spec, root, [library_dir])]
    words = (cflag_list if cflags else []) + (ldflag_list if ldflags else [])
    click.echo(" ".join(_shell_word(w) for w in words))


def header_gap_flags(spec, root: str) -> list[str]:
    """-I of a stand-in for each header clang's wrapper headers include that the toolkit at `root` lacks."""
    if not spec.header_gaps:
        return []
    gaps = data_path(spec.header_gaps)
    flags = []
    for folder in (os.path.join(gaps, name) for name in sorted(os.listdir(gaps))):
        if not os.path.isdir(folder):
            continue
        headers = [name for name in os.listdir(folder) if name.endswith(".h")]
        if any(not os.path.isfile(os.path.join(root, "include", header)) for header in headers):
            flags.append(f"-I{folder}")
    return flags


def _offload_kind_of(archs: str | None) -> str:
    if archs and all(a.strip().startswith("gfx") for a in archs.split(",")):
        return "hip"
    return "cuda"


def _shell_word(word: str) -> str:
    import shlex

    return shlex.quote(word)


@config.command("show")
@click.argument("input", required=False, type=click.Path(dir_okay=True))
@command_options("config show", (SPECS, LINK_SPECS))
def config_show(input: str | None, **flags) -> None:
    """Print every effective setting and where it came from (flag, file:line, default).

    INPUT (a file or folder, default: the current folder) is where the search for mlir-offload.toml
    starts; it walks up to the root. The output is itself a valid mlir-offload.toml."""
    from offload.config import find_config, load_config, render_toml_value

    found = find_config(input)
    start = input if input is not None else os.getcwd()
    applied = load_config(found) if found else None
    resolved = resolve(given_flags(flags), applied)
    link = resolve_link(given_table_flags(LINK_SPECS, flags), applied)
    if applied is not None:
        click.echo(f"# configuration file: {found}")
    elif found is not None:
        click.echo(f"# configuration file: none ({found} is not trusted: not applied)")
    else:
        click.echo(f"# configuration file: none (searched from {start} up)")
    rows = []
    for key, (declared, *_) in TOML_SPECS.items():
        name = key.replace("-", "_")
        # A key of both tables (sanitize) has one value: compile's row stands for both.
        in_compile = name in SPECS and SPECS[name].toml
        record, origins = (resolved.options, resolved.origins) if in_compile else (link.options, link.origins)
        shown = getattr(record, name)
        if declared.secret and isinstance(shown, str):
            from offload.cache.remote import redact

            shown = redact(shown)
        origin = origins[name]
        if name == "clang" and origin == "default":
            shown, origin = linking_clang(resolved.options.target_clang)
        value = render_toml_value(shown)
        text = f"{key} = {value}" if value else f"# {key} = (unset)"
        rows.append((text, origin))
    width = max(len(t) for t, _ in rows)
    for text, origin in rows:
        click.echo(f"{text.ljust(width)}  # {origin}")


def linking_clang(target_clang: int) -> tuple[str | None, str]:
    """(the clang link would use for bundles of `target_clang`, where that came from): link's own search."""
    from offload.toolchain.tools import find_target_clang

    try:
        found = find_target_clang(None, target_clang)
    except OffloadError:
        return None, f"default: no clang {target_clang} found (install clang-{target_clang})"
    return found.path, f"default: link's search for clang {target_clang} (clang {found.version})"


COMMAND = config
