"""The CLI's command table: every command's module exports it, a run imports only that module, help
needs no command module, and a misspelt command gets "did you mean"."""

import importlib
import subprocess
import sys

import pytest

from conftest import run_cli
from offload.cli import COMMANDS

pytestmark = pytest.mark.no_toolchain


def test_every_table_entry_names_a_module_exporting_that_command():
    for name, (module, summary) in COMMANDS.items():
        command = importlib.import_module(module).COMMAND
        assert command.name == name and summary.endswith(".")


def test_device_help_imports_no_other_command_module():
    probe = (
        "import sys\nfrom offload.cli import main\ntry:\n    main(['device', '--help'])\n"
        "except SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('offload.commands.')))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "['offload.commands.device']"


def test_top_level_help_imports_no_command_module():
    probe = (
        "import sys\nfrom offload.cli import main\ntry:\n    main(['--help'])\n"
        "except SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('offload.commands.')))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"
    for name, (_, summary) in COMMANDS.items():
        assert name in out and summary[:30] in " ".join(out.split())


def test_misspelt_command_gets_did_you_mean():
    r = run_cli("verfiy", "x")
    assert r.returncode == 2
    assert r.stderr.strip().splitlines()[0] == (
        "mlir-offload: error: no such command 'verfiy'; did you mean 'verify'? (see 'mlir-offload --help')"
    )
