"""Imports sit at module top: a function imports an offload module only where importing it at the top
would cost start-up (the module is not loaded already when its importer is). Commands import their
machinery inside their functions (pip's lazy commands): importing every offload module costs about
0.6 s on the 2-core machine, `import offload.cli` about 0.05 s (docs/development.md)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys

from conftest import REPO

# Run in a fresh interpreter that imports nothing of offload itself: one forked child per module
# imports it and reports which offload modules that loaded.
LOADED_BY_EACH = r"""
import json, os, sys
result = {}
for name in sys.argv[1:]:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            __import__(name)
            loaded = sorted(m for m in sys.modules if m.startswith("offload"))
        except BaseException as e:
            loaded = {"error": repr(e)}
        os.write(write, json.dumps(loaded).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        result[name] = json.loads(pipe.read())
    os.waitpid(pid, 0)
print(json.dumps(result))
"""


def module_name(path) -> str:
    name = ".".join(path.relative_to(REPO).with_suffix("").parts)
    return name.removesuffix(".__init__")


def imported_module(node: ast.ImportFrom, name: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = name.split(".") if is_package else name.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def test_no_function_imports_a_module_its_module_already_loads():
    paths = [p for p in sorted((REPO / "offload").rglob("*.py")) if p.name != "__main__.py"]
    names = [module_name(p) for p in paths]
    done = subprocess.run(
        [sys.executable, "-c", LOADED_BY_EACH, *names],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    loaded_by = json.loads(done.stdout)
    findings = []
    for path, name in zip(paths, names, strict=True):
        loaded = loaded_by[name]
        assert isinstance(loaded, list), f"{name} cannot be imported alone: {loaded}"
        for function in ast.walk(ast.parse(path.read_text())):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for statement in function.body:
                if isinstance(statement, ast.ImportFrom):
                    target = imported_module(statement, name, path.name == "__init__.py")
                    if target.startswith("offload") and target in loaded:
                        findings.append(f"{path.relative_to(REPO)}:{statement.lineno}: {target} (loaded already)")
    assert not findings, "imports to move to the module's top:\n" + "\n".join(findings)
