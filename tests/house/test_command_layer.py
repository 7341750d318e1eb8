"""Commands never call commands: no module of offload/commands/ imports another (compile's parsing and
compile live in offload/driver/program.py, which `compile`, `run` and `ship` call; `inspect` and
`extract` share offload.driver.textual_ir and offload.formats.profiles)."""

from __future__ import annotations

import ast

import pytest

from conftest import REPO

pytestmark = pytest.mark.no_toolchain

COMMANDS = REPO / "offload" / "commands"


def command_imports(source: str) -> list[str]:
    """The offload.commands modules a command module's source imports (anywhere in it: top, functions)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if alias.name.startswith("offload.commands")]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: inside offload/commands/ (a level-1 import names a sibling)
                base = "offload.commands" if node.level == 1 else "offload"
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            if module == "offload.commands":
                found += [f"offload.commands.{alias.name}" for alias in node.names]
            elif module.startswith("offload.commands."):
                found.append(module)
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and node.value.startswith("offload.commands.")
        ):
            found.append(node.value)  # importlib.import_module("offload.commands.x")
    return found


def test_the_scan_finds_each_form():
    source = (
        "import offload.commands.compile\n"
        "from offload.commands.inspect import _load_images\n"
        "from offload.commands import run\n"
        "def f():\n"
        "    from . import ship\n"
        "    from .compile import compile_command\n"
        "    importlib.import_module('offload.commands.verify')\n"
        "from offload.driver.program import compile_words\n"
    )
    assert command_imports(source) == [
        "offload.commands.compile",
        "offload.commands.inspect",
        "offload.commands.run",
        "offload.commands.ship",
        "offload.commands.compile",
        "offload.commands.verify",
    ]


def test_no_command_imports_another_command():
    modules = sorted(COMMANDS.glob("*.py"))
    assert COMMANDS / "run.py" in modules and COMMANDS / "ship.py" in modules
    found = [
        f"{path.name}: {imported}"
        for path in modules
        if path.name != "__init__.py"
        for imported in command_imports(path.read_text())
    ]
    assert found == []
