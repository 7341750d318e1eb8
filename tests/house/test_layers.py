"""The package's layering, as data: offload's modules sit on ordered floors, each importing only from its
own floor or those below (docs/development.md). No two modules import each other, directly or through
others, nor do two packages; every import counts (at a module's top or inside a function), except those
under `if TYPE_CHECKING:`, which never run."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from conftest import REPO

pytestmark = pytest.mark.no_toolchain

ROOT = "offload"  # the package's own __init__: a floor entry of its own, not a prefix of every module

# Bottom first. An entry names a module, or a package and every module under it.
FLOORS: list[tuple[str, tuple[str, ...]]] = [
    # What every layer uses: errors, files, signals, trust of folders, tracing, forked children.
    (
        "base",
        (
            ROOT,
            "offload.data",
            "offload.errors",
            "offload.fsutil",
            "offload.interrupts",
            "offload.trust",
            "offload.trace",
            "offload.processes",
        ),
    ),
    ("formats", ("offload.formats",)),  # facts and file formats both sides share (vendors, targets, ELF)
    ("packager", ("offload.packager",)),  # OffloadBinary containers and the bundle record in them
    ("options", ("offload.foreign_options", "offload.options", "offload.config")),  # the options tables, TOML
    ("cache", ("offload.cache",)),  # the caches' storage: local folder, remote tier, entries, whole compiles
    ("toolchain", ("offload.toolchain",)),  # finding and running clang, ptxas, lld; link, ship, emulate, verify
    ("mlir", ("offload.mlir", "offload.about")),  # the MLIR bindings and the helpers over them
    ("device", ("offload.device",)),  # gpu.modules -> device images (the skeleton), their cache
    ("host", ("offload.host",)),  # host code: launches, runtime shims, entries, the embedded images
    ("driver", ("offload.driver",)),  # one compile: plan, stages, outputs
    ("commands", ("offload.commands",)),
    ("front door", ("offload.cli", "offload.__main__", "offload.caret", "offload.command_line", "offload.api")),
]

# The imports allowed to run from a lower floor up to a higher one, each with why (at most 2).
UPWARD: dict[tuple[str, str], str] = {}


def module_name(path: Path, root: Path = REPO) -> str:
    return ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")


def _imported(node: ast.ImportFrom, name: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = name.split(".") if is_package else name.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _is_type_checking(node: ast.AST) -> bool:
    test = node.test if isinstance(node, ast.If) else None
    return isinstance(test, ast.Name | ast.Attribute) and ast.unparse(test).endswith("TYPE_CHECKING")


def imports_of(source: str, name: str, is_package: bool, modules: set[str]) -> set[str]:
    """The offload modules a module's source imports, anywhere but under `if TYPE_CHECKING:`."""
    found: set[str] = set()
    stack: list[ast.AST] = [ast.parse(source)]
    while stack:
        node = stack.pop()
        if _is_type_checking(node):
            stack.extend(node.orelse)  # type: ignore[attr-defined]
            continue
        stack.extend(ast.iter_child_nodes(node))
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = _imported(node, name, is_package)
            # `from package import submodule` imports the submodule; `from module import name`, the module.
            targets = [
                f"{module}.{alias.name}" if f"{module}.{alias.name}" in modules else module for alias in node.names
            ]
        found |= {target for target in targets if target in modules and target != name}
    return found


def import_graph(root: Path = REPO) -> dict[str, set[str]]:
    paths = {module_name(p, root): p for p in sorted((root / "offload").rglob("*.py"))}
    modules = set(paths)
    return {name: imports_of(p.read_text(), name, p.name == "__init__.py", modules) for name, p in paths.items()}


def package_of(module: str) -> str:
    """offload.device.image_cache -> offload.device; a top-level module is its own package."""
    return ".".join(module.split(".")[:2])


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    packages: dict[str, set[str]] = {package_of(m): set() for m in graph}
    for module, imported in graph.items():
        packages[package_of(module)] |= {package_of(t) for t in imported} - {package_of(module)}
    return packages


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph.get(successor, ())))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def floor_of(module: str) -> int | None:
    """The index in FLOORS of the floor a module is on (its longest matching entry), or None."""
    best: tuple[int, int] | None = None
    for level, (_, entries) in enumerate(FLOORS):
        for entry in entries:
            if module == entry or (entry != ROOT and module.startswith(entry + ".")):
                if best is None or len(entry) > best[0]:
                    best = (len(entry), level)
    return None if best is None else best[1]


def upward_imports(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    return sorted(
        (module, target)
        for module, imported in graph.items()
        for target in imported
        if (floor_of(target) or 0) > (floor_of(module) or 0)
    )


def test_every_module_is_on_a_floor():
    graph = import_graph()
    assert [m for m in graph if floor_of(m) is None] == []
    entries = [entry for _, floor in FLOORS for entry in floor]
    assert len(entries) == len(set(entries))
    assert [entry for entry in entries if entry not in graph] == []  # no floor names a module that is gone


def test_no_module_circle():
    assert circles(import_graph()) == []


def test_no_package_circle():
    assert circles(package_graph(import_graph())) == []


def test_imports_run_down_the_floors():
    found = upward_imports(import_graph())
    assert len(UPWARD) <= 2
    unexplained = [f"{module} -> {target}" for module, target in found if (module, target) not in UPWARD]
    assert unexplained == [], "imports from a lower floor up to a higher one:\n" + "\n".join(unexplained)
    assert sorted(UPWARD) == found  # an allowed exception that no longer happens is struck off


def test_the_checks_see_a_planted_circle_and_an_upward_import(tmp_path):
    """A copy of the package with one import added up from the base floor: both a module circle (trace ->
    cli -> ... -> trace) and package circles appear, and the import is reported as upward."""
    import shutil

    shutil.copytree(REPO / "offload", tmp_path / "offload", ignore=shutil.ignore_patterns("data", "__pycache__"))
    trace = tmp_path / "offload" / "trace.py"
    trace.write_text(trace.read_text() + "\n\ndef _planted():\n    from offload.device import image_cache  # noqa\n")
    graph = import_graph(tmp_path)
    assert "offload.device.image_cache" in graph["offload.trace"]
    assert any("offload.trace" in circle and "offload.device.image_cache" in circle for circle in circles(graph))
    assert any("offload.trace" in circle and "offload.device" in circle for circle in circles(package_graph(graph)))
    assert ("offload.trace", "offload.device.image_cache") in upward_imports(graph)


def test_type_checking_imports_do_not_count_and_submodules_are_what_is_imported():
    source = (
        "from typing import TYPE_CHECKING\n"
        "import offload.b\n"
        "if TYPE_CHECKING:\n"
        "    from offload.c import X\n"
        "else:\n"
        "    from offload import d\n"
        "def f():\n"
        "    from . import e\n"
        "    from offload.b import X\n"
    )
    modules = {"offload", "offload.a", "offload.b", "offload.c", "offload.d", "offload.e"}
    # `from offload import d` imports the submodule offload.d, not the package's __init__
    assert imports_of(source, "offload.a", False, modules) == {"offload.b", "offload.d", "offload.e"}
