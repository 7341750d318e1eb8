"""Command `verify`: check that a linked executable carries and registers its device code; what it checks
is offload/toolchain/verify.py's."""

from __future__ import annotations

import click

from offload.errors import one_line


@click.command("verify")
@click.argument("app", type=click.Path())
@click.option("-q", "--quiet", is_flag=True, help="Print nothing when the executable is fine.")
@click.option(
    "--host-triple",
    "host",
    default=None,
    metavar="TRIPLE",
    help="Also check that APP is for this host CPU (x86_64-linux-gnu, aarch64-linux-gnu).",
)
@click.pass_context
def verify(ctx: click.Context, app: str, quiet: bool, host: str | None) -> None:
    """Check that executable APP carries and registers device code for every kernel it launches.

    Exit 1 and name each missing piece when it does not."""
    if host is not None:
        from offload.formats.hosts import host_triple

        host_triple(host)  # an unsupported spelling is refused before reading APP
    from offload.toolchain.verify import check_executable

    report = check_executable(app, host)
    if not report.ok:
        # The first problem is the error; the others follow as notes (one line each, names escaped).
        click.echo(one_line(f"mlir-offload: error: {report.problems[0]}"), err=True)
        for problem in report.problems[1:]:
            note = new_facts(problem, report.problems[0], app)
            if note:
                click.echo(one_line(f"mlir-offload: note: {note}"), err=True)
        ctx.exit(1)
    if not quiet:
        click.echo(one_line(f"{app}: ok"))
        for note in report.notes:
            click.echo(one_line(f"  {note}"))


def new_facts(problem: str, error: str, app: str) -> str:
    """`problem` less what the error line already says: the file's name, a hint in parentheses the error
    gives too; empty when nothing is left (a note never repeats the error)."""
    if problem.startswith(f"{app}: ") and error.startswith(f"{app}: "):
        problem = problem[len(app) + 2 :]
    if problem.endswith(")") and "(" in problem:
        hint = problem[problem.rindex("(") + 1 : -1]
        if hint and hint in error:
            problem = problem[: problem.rindex("(")].rstrip()
    return "" if problem in error else problem


COMMAND = verify
