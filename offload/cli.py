"""The mlir-offload command line. Each command lives in the module that owns its job; heavy modules
(mlir, llvmlite) are imported inside the commands that need them, never here."""

from __future__ import annotations

import importlib
import os
import sys

import click

from offload import __version__
from offload.errors import OffloadError

# Modules that each export COMMANDS: a list of click commands.
COMMAND_MODULES = (
    "offload.cmd_packager",  # package, inspect, extract
    "offload.cmd_device",  # device
    "offload.cmd_host",  # compile, link
    "offload.cmd_verify",  # verify
    "offload.cmd_ship",  # ship, config, doctor
)


# The commands each module exports, so that a run imports only the module of its command (`device`
# need not import the packager, host, verify and ship modules); a test checks it against COMMANDS.
COMMAND_NAMES = {
    "offload.cmd_packager": ("package", "inspect", "extract"),
    "offload.cmd_device": ("device",),
    "offload.cmd_host": ("compile", "link"),
    "offload.cmd_verify": ("verify",),
    "offload.cmd_ship": ("ship", "config", "doctor"),
}


class LazyGroup(click.Group):
    """A group that imports a command's module when the command is looked up (--help lists them all)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(self.commands) | {n for names in COMMAND_NAMES.values() for n in names})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands:
            module = next((m for m, names in COMMAND_NAMES.items() if cmd_name in names), None)
            if module is not None:
                for command in getattr(importlib.import_module(module), "COMMANDS", ()):
                    self.commands.setdefault(command.name, command)
        return self.commands.get(cmd_name)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="mlir-offload")
def cli() -> None:
    """Turn MLIR GPU-dialect programs into clang-compatible offload bundles."""


def main(argv: list[str] | None = None) -> None:
    """Entry point: compiler-style one-line errors; exit 1 for errors, 2 for usage errors."""
    try:
        # Commands return None; ctx.exit(N) (e.g. from --help or a failed check) comes back as N.
        status = cli.main(args=argv, prog_name="mlir-offload", standalone_mode=False)
    except OffloadError as e:
        _echo_error(e.render())
        sys.exit(1)
    except click.UsageError as e:
        hint = f" (see '{e.ctx.command_path} --help')" if e.ctx is not None else ""
        click.echo(f"mlir-offload: error: {e.format_message()}{hint}", err=True)
        sys.exit(2)
    except click.Abort:
        click.echo("mlir-offload: error: aborted", err=True)
        sys.exit(1)
    except click.ClickException as e:
        click.echo(f"mlir-offload: error: {e.format_message()}", err=True)
        sys.exit(e.exit_code)
    except BrokenPipeError:
        sys.exit(1)
    except Exception as e:  # a bug of ours: still one line for the user, the traceback on request
        if os.environ.get("MLIR_OFFLOAD_TRACEBACK"):
            raise
        detail = " ".join(str(e).split())
        _echo_error(f"mlir-offload: error: internal error ({type(e).__name__}: {detail}); rerun with "
                    "MLIR_OFFLOAD_TRACEBACK=1 and report the traceback")
        sys.exit(1)
    sys.exit(status if isinstance(status, int) else 0)


def _echo_error(line: str) -> None:
    # File names with undecodable bytes arrive as surrogate escapes: print their original bytes.
    sys.stderr.flush()
    sys.stderr.buffer.write(os.fsencode(line) + b"\n")
    sys.stderr.flush()
