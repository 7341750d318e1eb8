"""The target side (offload/toolchain/**) and every offload module it imports, at module or function level,
never import the build side (offload.driver, .device, .host), mlir or llvmlite: link, verify and
doctor run where neither MLIR nor llvmlite is installed. Checked statically on the source, import by import."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from conftest import REPO

pytestmark = pytest.mark.no_toolchain

PACKAGE = REPO / "offload"
FORBIDDEN = ("offload.driver", "offload.device", "offload.host", "mlir", "llvmlite")


def module_file(module: str) -> Path | None:
    path = PACKAGE.parent.joinpath(*module.split("."))
    if path.is_dir():
        return path / "__init__.py"
    return path.with_suffix(".py") if path.with_suffix(".py").is_file() else None


def imports_of(module: str) -> set[str]:
    """Every module an offload module imports, anywhere in its body, with each package on the way."""
    path = module_file(module)
    assert path is not None, module
    tree = ast.parse(path.read_text(), str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names if module_file(f"{base}.{alias.name}"))
    with_parents: set[str] = set()
    for name in found:
        parts = name.split(".")
        with_parents.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
    return with_parents


def reachable_from_target() -> dict[str, str]:
    """module -> the module that imports it, for everything the target side reaches."""
    roots = ["offload.toolchain"] + [f"offload.toolchain.{p.stem}" for p in (PACKAGE / "toolchain").glob("*.py")]
    seen = {root: "(target side)" for root in roots}
    work = list(roots)
    while work:
        module = work.pop()
        for imported in imports_of(module):
            if imported in seen:
                continue
            seen[imported] = module
            if imported.split(".")[0] == "offload" and module_file(imported):
                work.append(imported)
    return seen


def test_target_side_never_imports_the_build_side_mlir_or_llvmlite():
    reached = reachable_from_target()
    assert "offload.packager.containers" in reached and "offload.toolchain.link" in reached
    bad = sorted(
        f"{name} (imported by {by})"
        for name, by in reached.items()
        if any(name == f or name.startswith(f + ".") for f in FORBIDDEN)
    )
    assert bad == []


def test_the_check_sees_function_level_imports(tmp_path):
    # ship.py's build_archive imports the PTX checks inside a function: they must be reached.
    assert "offload.toolchain.ptx" in imports_of("offload.toolchain.ship")
    assert "llvmlite.binding" in imports_of("offload.driver.textual_ir")
