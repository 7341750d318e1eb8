"""The CLI imports only the module of the command that runs; its table of command names must match
what each module exports."""

import importlib
import subprocess
import sys

from offload.cli import COMMAND_MODULES, COMMAND_NAMES


def test_command_names_match_the_modules_commands():
    assert set(COMMAND_NAMES) == set(COMMAND_MODULES)
    for module, names in COMMAND_NAMES.items():
        assert sorted(c.name for c in importlib.import_module(module).COMMANDS) == sorted(names)


def test_device_help_imports_no_other_command_module():
    probe = ("import sys\nfrom offload.cli import main\ntry:\n    main(['device', '--help'])\n"
             "except SystemExit:\n    pass\n"
             "print(sorted(m for m in sys.modules if m.startswith('offload.cmd_')))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "['offload.cmd_device']"
