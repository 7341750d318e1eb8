"""The mlir-offload command line. Each command lives in the module that owns its job; heavy modules
(mlir, llvmlite) are imported inside the commands that need them, never here."""

from __future__ import annotations

import errno
import importlib
import os
import sys
from typing import NoReturn

import click

from offload import __version__, interrupts
from offload.errors import OffloadError, one_line, take_deferred_warnings

# The command table: name -> (module exporting COMMAND, one-line summary). It drives lazy import (a run
# imports only its command's module), `--help` (summaries without importing) and "did you mean".
COMMANDS: dict[str, tuple[str, str]] = {
    "compile": (
        "offload.commands.compile",
        "Compile an MLIR GPU program into one host bundle for clang's offload driver.",
    ),
    "link": ("offload.commands.link", "Link bundles, objects and flags into an executable with the target's clang."),
    "run": ("offload.commands.run", "Compile, link and run a program (--emulate: its kernels on this CPU)."),
    "verify": ("offload.commands.verify", "Check that a linked executable carries and registers its device code."),
    "ship": ("offload.commands.ship", "Archive a bundle with a Makefile and build.sh that need only clang and make."),
    "device": ("offload.commands.device", "Serialize the gpu.modules of a program to one device image per target."),
    "package": ("offload.commands.package", "Bundle device images into one OffloadBinary (as llvm-offload-binary)."),
    "inspect": ("offload.commands.inspect", "List the images of an OffloadBinary, a bundle or an object."),
    "extract": ("offload.commands.extract", "Write each image of an OffloadBinary to a file in a folder."),
    "config": ("offload.commands.config", "Show project settings (mlir-offload.toml) and the flags a link needs."),
    "doctor": (
        "offload.commands.doctor",
        "Say what this machine has for linking bundles, and whether it can link one.",
    ),
    "cache": ("offload.commands.cache", "Show the device image cache (folder, size, hits, misses); clear it (-C)."),
}


class LazyGroup(click.Group):
    """A group that imports a command's module only when that command runs."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            self.add_command(importlib.import_module(COMMANDS[cmd_name][0]).COMMAND, cmd_name)
        return self.commands.get(cmd_name)

    def resolve_command(self, ctx: click.Context, args: list[str]):
        name = args[0] if args else ""
        if name and not name.startswith("-") and name not in COMMANDS and name not in self.commands:
            import difflib  # only a misspelt command needs it

            close = difflib.get_close_matches(name, list(COMMANDS), n=1)
            hint = f"; did you mean '{close[0]}'?" if close else f"; commands: {', '.join(COMMANDS)}"
            ctx.fail(f"no such command '{name}'{hint}")
        return super().resolve_command(ctx, args)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, summary) for name, (_, summary) in COMMANDS.items()])


def _print_version(ctx: click.Context, _param, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from offload.about import version_lines  # only --version loads llvmlite (for its LLVM version)

    click.echo("\n".join([f"mlir-offload {__version__}", *version_lines()]))
    ctx.exit(0)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Show mlir-offload's version, its MLIR bindings and LLVM, and exit.",
)
def cli() -> None:
    """Turn MLIR GPU-dialect programs into clang-compatible offload bundles."""


def main(argv: list[str] | None = None) -> None:
    """Entry point: compiler-style one-line errors; exit 1 for errors, 2 for usage errors."""
    from offload.caret import take_caret_flag

    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        from offload.command_line import expand_response_files, with_environment_flags

        argv = with_environment_flags(expand_response_files(argv))
    except OffloadError as e:
        _echo_error(e.render())
        sys.exit(2)
    if argv[:1] == ["-V"] or argv[:1] and argv[0] in COMMANDS and "--version" in argv[: _end_of_options(argv)]:
        argv = ["--version"]  # nvcc's -V; `mlir-offload compile --version` as clang's and nvcc's
    argv, caret = take_caret_flag(argv)
    try:
        # Commands return None; ctx.exit(N) (e.g. from --help or a failed check) comes back as N.
        status = cli.main(args=argv, prog_name="mlir-offload", standalone_mode=False)
    except OffloadError as e:
        _echo_located_error(e, caret)
        sys.exit(1)
    except click.exceptions.NoArgsIsHelpError as e:
        # Bare `mlir-offload` (or a command with nothing to work on): the usage and command list as
        # real lines, on stderr since nothing ran, with the usage error's exit status.
        click.echo(e.ctx.get_help(), err=True)
        sys.exit(2)
    except click.UsageError as e:
        hint = f" (see '{e.ctx.command_path} --help')" if e.ctx is not None else ""
        _echo_error(f"mlir-offload: error: {e.format_message()}{hint}")
        sys.exit(2)
    except click.Abort:
        _echo_error("mlir-offload: error: aborted")
        sys.exit(1)
    except click.ClickException as e:
        _echo_error(f"mlir-offload: error: {e.format_message()}")
        sys.exit(e.exit_code)
    except BrokenPipeError:
        sys.exit(1)
    except MemoryError:
        os.write(2, b"mlir-offload: error: out of memory\n")
        sys.exit(1)
    except OSError as e:
        if not _is_full_output(e):
            _internal_error(e)
        _echo_error(f"mlir-offload: error: cannot write standard output: {e.strerror}")
        sys.exit(1)
    except Exception as e:  # noqa: BLE001 - a bug of ours: one line for the user (_internal_error)
        _internal_error(e)
    for line in take_deferred_warnings():
        _echo_error(line)
    sys.exit(status if isinstance(status, int) else 0)


def _internal_error(e: Exception) -> NoReturn:
    """A bug of ours: still one line for the user, the traceback on request."""
    if os.environ.get("MLIR_OFFLOAD_TRACEBACK"):
        raise e
    from offload.fsutil import current_folder, current_folder_error

    if isinstance(e, OSError) and e.filename is None and current_folder() is None:
        # os.getcwd() or a relative name resolved against it (os.path.abspath): the folder, not a bug of ours
        _echo_error(current_folder_error().render())
        sys.exit(1)
    detail = " ".join(str(e).split())
    _echo_error(
        f"mlir-offload: error: internal error ({type(e).__name__}: {detail}); rerun with "
        "MLIR_OFFLOAD_TRACEBACK=1 and report the traceback"
    )
    sys.exit(1)


def _is_full_output(error: OSError) -> bool:
    """A write to standard output that failed (a full disk or /dev/full, a quota, an I/O error): such an
    error names no file, where every file of ours is named in its OSError."""
    return error.filename is None and error.errno in (errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EFBIG)


def _end_of_options(argv: list[str]) -> int:
    return argv.index("--") if "--" in argv else len(argv)


def run() -> None:
    """The process entry point (console script, python -m offload): main(), then an exit that skips the
    interpreter's teardown of the MLIR bindings (50 ms): every output is a renamed file by then. SIGINT,
    SIGTERM and SIGHUP stop the command, its children and their temporaries with it (offload.interrupts):
    exit 128 + N, one line."""
    interrupts.install()
    code = 1
    try:
        code = _exit_status()
        interrupts.stop_raising()
    except interrupts.Interrupted:
        interrupts.stop_raising()  # from here a signal is only recorded: the exit below reports it
    os._exit(interrupts.exit_status(code))


def _exit_status() -> int:
    """main()'s exit status, its standard streams flushed."""
    guard_standard_streams()
    try:
        main()
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if isinstance(e.code, str):
            print(e.code, file=sys.stderr)
    except MemoryError:  # anywhere, even while printing: one line written without allocating
        os.write(2, b"mlir-offload: error: out of memory\n")
        os._exit(1)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError, OffloadError):
        code = code or 1
    return code


class ClosedStream:
    """Standard output when the process started with it closed (`>&-`): writing it is an error."""

    def write(self, text) -> int:
        raise OffloadError("cannot write standard output: it is closed")

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def guard_standard_streams() -> None:
    """A closed standard stream (`<&-`, `>&-`, `2>&-`) gets /dev/null on its descriptor, so no file we
    open later takes descriptor 0, 1 or 2 (our output would go into it); reading a closed standard input
    or writing a closed standard output is then an error, a closed standard error loses the messages only."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
            continue
        except OSError:
            pass
        try:
            opened = os.open(os.devnull, os.O_RDONLY if fd == 0 else os.O_WRONLY)
        except OSError:
            continue
        if opened != fd:
            os.dup2(opened, fd)
            os.close(opened)
        if fd == 0:
            sys.stdin = None
        elif fd == 1:
            sys.stdout = ClosedStream()
        else:
            sys.stderr = open(fd, "w", closefd=False)


def _echo_located_error(error: OffloadError, caret: bool | None) -> None:
    """One line; on a terminal (or with -fcaret-diagnostics) the source line and a caret follow."""
    if interrupts.received is not None:
        return  # a consequence of the interrupt: its own line says it
    from offload.caret import render, wants_caret, wants_colour

    if error.location is None or not wants_caret(caret, sys.stderr):
        _echo_error(error.render())
        return
    sys.stderr.flush()
    text = render(error.render(), error.location, wants_colour(sys.stderr))
    sys.stderr.buffer.write(os.fsencode(text) + b"\n")
    sys.stderr.flush()


def _echo_error(line: str) -> None:
    if interrupts.received is not None:
        return  # a consequence of the interrupt (a child it stopped, an import it cut short): its line says it
    # File names with undecodable bytes arrive as surrogate escapes: print their original bytes.
    sys.stderr.flush()
    sys.stderr.buffer.write(os.fsencode(one_line(line)) + b"\n")
    sys.stderr.flush()
