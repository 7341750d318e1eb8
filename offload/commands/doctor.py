"""Command `doctor`: can this machine link a bundle?"""

from __future__ import annotations

import click


@click.command()
@click.option(
    "--bundle",
    "bundle",
    type=click.Path(),
    default=None,
    help="a bundle (.offload.bc, .offload.o), a shipped archive (.tar.gz) or an unpacked one (its folder "
    "or manifest.json)",
)
@click.option("--clang", "clangs", multiple=True, help="a clang to consider besides those found")
@click.option("--cuda-path", default=None, help="CUDA toolkit to use (default: found)")
@click.option("--rocm-path", default=None, help="ROCm install to use (default: found)")
@click.pass_context
def doctor(
    ctx: click.Context, bundle: str | None, clangs: tuple[str, ...], cuda_path: str | None, rocm_path: str | None
) -> None:
    """What this machine has for linking bundles; with --bundle, whether it can link that one.

    Exits 1 when no clang here can link the bundle (or, without --bundle, when there is no usable clang)."""
    from offload.about import report_compiler
    from offload.toolchain import doctor as doc
    from offload.toolchain import tools as toolchain

    found = toolchain.find_clangs(list(clangs))
    cuda = toolchain.find_cuda(cuda_path)
    rocm = toolchain.find_rocm(rocm_path)
    for line in doc.report_machine(found, cuda, rocm) + report_compiler():
        click.echo(line)
    for given in clangs:  # a --clang that is no clang is said, never passed over
        if toolchain.describe_clang(given) is None:
            click.echo(f"--clang {given}: not a usable clang (not found, or its --version names no version)")
    if bundle is None:
        if not any(c.linker_wrapper for c in found):
            click.echo(
                "no clang with clang-linker-wrapper: this machine cannot link bundles "
                "(fix: install clang-22 and clang-tools-22)"
            )
            ctx.exit(1)
        return
    from offload.toolchain.ship import read_bundle_needs

    needs, wrapper_shipped = read_bundle_needs(bundle)
    click.echo(
        f"bundle {needs.name}: entry profile clang {needs.entry_profile}, "
        f"{f'producer LLVM {needs.producer_llvm}' if needs.producer_llvm else 'no bitcode'}, "
        f"{', '.join(needs.offload_kinds)} {', '.join(needs.archs)}, "
        f"device images {needs.device_image}, host {needs.host_format}"
        + (f", libraries {', '.join(needs.record.libraries)}" if needs.record.libraries else "")
        + (
            f", sparse tensor runtime {needs.record.sparse_tensor_runtime} (libmlir_c_runner_utils)"
            if needs.record.sparse_tensor_runtime
            else ""
        )
    )
    named = [toolchain.describe_clang(c) for c in clangs]
    candidates: list[toolchain.Clang | None] = [c for c in (clangs and named or found) if c] or [None]
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
    how = f"make CLANG={usable.path}" if needs.shipped else f"mlir-offload link {needs.name} --clang {usable.path}"
    click.echo(f"this machine can link {needs.name}: {how}")


COMMAND = doctor
