"""Errors carry the options they name as facts (offload.errors.Mention, by the option's table key), and each
front end words them: the command line as its flag (--offload-arch), the Python API (offload.api) as its
keyword (offload_arch=), the rest of the sentence the same. No layer under the commands spells a table's
flag in an error message by hand, but for the command-line-only ones listed here with why."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from conftest import REPO, run_cli
from offload import api
from offload.errors import FLAG, FLAGS, KEY, KEYWORD, Mention, OffloadError
from offload.options import LINK_SPECS, SPECS

SAXPY = REPO / "examples" / "saxpy.mlir"
PREFIX = "mlir-offload: error: "


def cli_error(*args: str, cwd: Path) -> str:
    done = run_cli(*args, cwd=cwd)
    assert done.returncode == 1, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(PREFIX), done.stderr
    return lines[0][len(PREFIX) :]


def api_error(call) -> str:
    with pytest.raises(OffloadError) as caught:
        call()
    return str(caught.value)


def assert_worded(cli: str, python: str, flag: str, keyword: str) -> None:
    """The CLI's message names the flag, the API's the keyword, and the two say the same otherwise."""
    assert flag in cli and keyword not in cli, cli
    assert keyword in python and flag not in python, python
    assert cli.replace(flag, keyword) == python


def test_a_formats_error_names_the_flag_or_the_keyword(tmp_path):
    # offload/formats/targets.py, under the options tables: it names the option by key alone.
    cli = cli_error("compile", str(SAXPY), "--offload-arch", "sm_80,,sm_90", "-o", "x.bc", cwd=tmp_path)
    python = api_error(lambda: api.compile_file(SAXPY, "sm_80,,sm_90"))
    assert cli.startswith("empty architecture name in ")
    assert_worded(cli, python, "--offload-arch 'sm_80,,sm_90'", "offload_arch='sm_80,,sm_90'")
    assert not (tmp_path / "x.bc").exists()


def test_an_emulator_error_names_the_flag_or_the_keyword(tmp_path):
    # offload/toolchain/emulate.py: the LLVM the emulator needs is not the named clang.
    bundle = tmp_path / "saxpy.bc"
    done = run_cli("compile", str(SAXPY), "--offload-arch", "sm_80", "--emulate", "-o", str(bundle), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    missing = str(tmp_path / "no-such" / "clang")
    cli = cli_error("link", str(bundle), "--emulate", "--clang", missing, "-o", "saxpy", cwd=tmp_path)
    python = api_error(lambda: api.link([bundle], tmp_path / "saxpy", emulate=True, clang=missing))
    assert " needs clang 22 with opt and llvm-config beside it" in cli
    assert_worded(cli, python, "--emulate", "emulate=True")
    assert not (tmp_path / "saxpy").exists()


def test_a_frontend_error_names_the_flag_or_the_keyword(tmp_path):
    # offload/mlir/frontend.py: a pass pipeline that does not parse.
    pipeline = "builtin.module(no-such-pass)"
    cli = cli_error("compile", str(SAXPY), "--offload-arch", "sm_80", "--pass-pipeline", pipeline, cwd=tmp_path)
    python = api_error(lambda: api.compile_file(SAXPY, "sm_80", pass_pipeline=pipeline))
    assert_worded(cli, python, "--pass-pipeline: ", "pass_pipeline: ")
    assert "no-such-pass" in cli


@pytest.mark.parametrize(
    ("mention", "flag", "keyword", "key"),
    [
        (Mention("opt_level", "2", joined=True), "-O2", "opt_level=2", 'opt-level = "2"'),
        (Mention("cache", False), "--no-cache", "cache=False", "cache = false"),
        (Mention("cudart", "static", joined=True), "--cudart=static", "cudart=static", 'cudart = "static"'),
        (Mention("host_triple", "x86_64-linux-gnu"), "--host-triple x86_64-linux-gnu", None, None),
    ],
)
def test_a_mention_by_key_is_spelled_as_its_table_declares(mention, flag, keyword, key):
    assert mention.worded(FLAG) == flag
    if keyword:
        assert mention.worded(KEYWORD) == keyword and mention.worded(KEY) == key


def test_options_of_both_tables_are_spelled_alike():
    for name in SPECS.keys() & LINK_SPECS.keys():
        assert SPECS[name].flags[:1] == LINK_SPECS[name].flags[:1], name
    assert FLAGS["cache"] == ("--cache", "--no-cache") and FLAGS["cuda_path"] == ("--cuda-path",)


# ---- no hand-spelled flags in error messages under the command layer ------------------------------

COMMAND_LAYER = ("offload/commands/", "offload/cli.py")

# (module, flag) -> why its error message may spell the flag: each names something only the command line has.
SPELLED_FLAGS: dict[tuple[str, str], str] = {
    **{
        ("offload/driver/program.py", flag): "compile's outputs on the command line (-o, -MD, -ftime-trace): "
        "program.py runs only under `mlir-offload compile`, `run` and `ship`, never the API"
        for flag in ("-MD", "-MF", "-ftime-trace", "--device-image", "--portable")
    },
    **{
        ("offload/foreign_options.py", flag): "answers an nvcc or clang option typed on the command line with "
        "mlir-offload's own flag"
        for flag in ("--offload-arch", "--resource-usage", "-v")
    },
    ("offload/options/spec.py", "--target-clang"): "reads the flag's own text (Kind.from_flag): command line only",
    ("offload/toolchain/emulate_objects.py", "-fgpu-rdc"): "clang's own flag, for compiling the CUDA source "
    "of an object (not compile's option of the same spelling)",
    **{
        ("offload/toolchain/ship.py", flag): "advice for the `mlir-offload compile` command that ship's build "
        "script runs; ship is a command only (the API has none)"
        for flag in ("--portable", "--link-bitcode", "--device-image", "--symbol-prefix")
    },
}


def table_flags() -> dict[str, str]:
    """Every spelling of every option of the tables -> the option."""
    return {
        flag: name
        for table in (SPECS, LINK_SPECS)
        for name, spec in table.items()
        for declaration in spec.flags
        for flag in declaration.split("/")
    }


def error_calls(tree: ast.AST):
    """The calls of OffloadError or a subclass of it (a name ending in Error)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            function = node.func
            name = function.id if isinstance(function, ast.Name) else getattr(function, "attr", "")
            if name.endswith("Error"):
                yield node


def spelled_flags() -> dict[tuple[str, str], int]:
    """(module, flag) -> a line where an error message under the command layer spells the flag."""
    flags = table_flags()
    token = re.compile(r"(?<![\w-])(-{1,2}[A-Za-z][\w-]*|-###)")
    found: dict[tuple[str, str], int] = {}
    for path in sorted((REPO / "offload").rglob("*.py")):
        module = path.relative_to(REPO).as_posix()
        if module.startswith(COMMAND_LAYER):
            continue
        for call in error_calls(ast.parse(path.read_text())):
            for argument in [*call.args, *(keyword.value for keyword in call.keywords)]:
                for node in ast.walk(argument):
                    if isinstance(node, ast.Constant) and isinstance(node.value, str):
                        for flag in token.findall(node.value):
                            if flag in flags:
                                found.setdefault((module, flag), node.lineno)
    return found


def test_no_error_message_under_the_commands_spells_a_flag():
    found = spelled_flags()
    spelled = {
        f"{module}:{line}: {flag}" for (module, flag), line in found.items() if (module, flag) not in SPELLED_FLAGS
    }
    assert not spelled, "name the option with a Mention (compile_option, link_option, Mention(key)): " + ", ".join(
        sorted(spelled)
    )
    assert not SPELLED_FLAGS.keys() - found.keys(), "allowed but no longer spelled: drop from SPELLED_FLAGS"


def test_every_mention_by_key_names_an_option_of_a_table():
    names = SPECS.keys() | LINK_SPECS.keys()
    for path in (REPO / "offload").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", None) in ("Mention", "compile_option", "link_option")
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                assert node.args[0].value in names, f"{path}:{node.lineno}: {node.args[0].value}"
