"""No module of the package looks a function up by a name stored as data: the records of offload/formats/
(vendors, hosts, targets, profiles) hold no function's name, and no module reads `globals()[name]` or calls
`getattr(obj, name)(...)`; a vendor's functions are typed mappings {Vendor: function} in the layer that owns
them (CODEGEN_HOOKS, TOOLKIT_FINDERS). (`getattr(record, field.name)` alone reads data fields, so the
names are checked where they would be stored: in the records.)"""

from __future__ import annotations

import ast
import dataclasses
import importlib

import pytest

from conftest import REPO

pytestmark = pytest.mark.no_toolchain

PACKAGE = REPO / "offload"


def lookups_by_name(source: str) -> list[tuple[int, str]]:
    """(line, code) of each lookup of a function by a computed name: `globals()[x]` (also vars(), locals())
    read, `getattr(obj, x)(...)` with x not a literal. A module's or a proxy's `__getattr__` (the attribute
    asked for, forwarded) is not one."""
    found = []

    def visit(node: ast.AST, in_getattr_hook: bool) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            in_getattr_hook = node.name == "__getattr__"
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.ctx, ast.Load)
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name)
            and node.value.func.id in ("globals", "vars", "locals")
        ):
            found.append((node.lineno, ast.unparse(node)))
        if not in_getattr_hook and isinstance(node, ast.Call) and _dynamic_getattr(node.func):
            found.append((node.lineno, ast.unparse(node)))
        for child in ast.iter_child_nodes(node):
            visit(child, in_getattr_hook)

    visit(ast.parse(source), False)
    return found


def _dynamic_getattr(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "getattr"
        and len(node.args) >= 2
        and not isinstance(node.args[1], ast.Constant)
    )


def test_the_scan_finds_each_form():
    source = (
        "def f(vendor, op, module):\n"
        "    globals()[vendor.finder](1)\n"
        "    getattr(self, op.name)(2)\n"
        "    getattr(module, vendor.hook)(3)\n"
        "    return getattr(settings, 'cuda_path'), globals()['x'], vars(module)[op], getattr(record, field.name)\n"
        "def __getattr__(name):\n"
        "    return getattr(real, name)()\n"
    )
    assert [code for _, code in lookups_by_name(source)] == [
        "globals()[vendor.finder]",
        "getattr(self, op.name)(2)",
        "getattr(module, vendor.hook)(3)",
        "globals()['x']",
        "vars(module)[op]",
    ]


def test_no_module_looks_a_function_up_by_a_stored_name():
    modules = sorted(PACKAGE.rglob("*.py"))
    assert PACKAGE / "toolchain" / "tools.py" in modules
    found = [
        f"{path.relative_to(PACKAGE)}:{line}: {code}"
        for path in modules
        for line, code in lookups_by_name(path.read_text())
    ]
    assert found == []


def _records(value: object, seen: set[int]):
    """Every dataclass instance in a value (inside dicts, tuples, lists, sets and other records)."""
    if id(value) in seen:
        return
    seen.add(id(value))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        yield value
        for field in dataclasses.fields(value):
            yield from _records(getattr(value, field.name), seen)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _records(item, seen)
    elif isinstance(value, (tuple, list, set, frozenset)):
        for item in value:
            yield from _records(item, seen)


def test_no_format_record_holds_a_function_name():
    from offload.formats.profiles import available_profiles, load_profile

    functions = {
        node.name
        for path in PACKAGE.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    }
    assert {"find_cuda", "bitcode_to_cubin"} <= functions
    values: list[object] = [load_profile(major) for major in available_profiles()]
    for path in sorted((PACKAGE / "formats").glob("*.py")):
        name = "offload.formats" + ("" if path.stem == "__init__" else f".{path.stem}")
        values += [v for k, v in vars(importlib.import_module(name)).items() if not k.startswith("__")]
    seen: set[int] = set()
    records = [record for value in values for record in _records(value, seen)]
    assert {type(record).__name__ for record in records} >= {"Vendor", "Profile"}
    named = [
        f"{type(record).__name__}.{field.name} = {getattr(record, field.name)!r}"
        for record in records
        for field in dataclasses.fields(record)
        if isinstance(getattr(record, field.name), str) and getattr(record, field.name) in functions
    ]
    assert named == []
