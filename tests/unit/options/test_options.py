"""The options table (offload/options/compile.py): each option declared once gives the flag, the mlir-offload.toml
key, the API keyword and `config show`'s row, resolved by one cascade into one frozen record."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from conftest import REPO, run_cli
from offload import api
from offload.errors import OffloadError
from offload.options import API_KEYWORDS, DEFAULTS, LINK_SPECS, SPECS, TOML_KEYS, TOML_SPECS, CompileOptions

SAXPY = REPO / "examples" / "saxpy.mlir"


def _project(folder: Path, toml: str | None = None) -> Path:
    folder.mkdir()
    shutil.copy(SAXPY, folder / "saxpy.mlir")
    if toml is not None:
        (folder / "mlir-offload.toml").write_text(toml)
    return folder / "saxpy.mlir"


def test_a_flag_its_toml_key_and_its_api_keyword_give_identical_bundles(tmp_path):
    by_flag = _project(tmp_path / "flag")
    by_file = _project(
        tmp_path / "file", 'offload-arch = "sm_80"\nopt-level = 1\nftz = true\nprec-div = false\ncache = false\n'
    )
    by_keyword = _project(tmp_path / "keyword")
    done = run_cli(
        "compile",
        str(by_flag),
        "--offload-arch",
        "sm_80",
        "-O1",
        "--ftz",
        "--no-prec-div",
        "--no-cache",
        "-o",
        str(tmp_path / "flag.bc"),
    )
    assert done.returncode == 0, done.stderr
    done = run_cli("compile", str(by_file), "-o", str(tmp_path / "file.bc"))
    assert done.returncode == 0, done.stderr
    bundle = api.compile_file(by_keyword, "sm_80", opt_level=1, ftz=True, prec_div=False, cache=False)
    plain = run_cli("compile", str(by_flag), "--offload-arch", "sm_80", "--no-cache", "-o", str(tmp_path / "plain.bc"))
    assert plain.returncode == 0, plain.stderr
    flag_bytes = (tmp_path / "flag.bc").read_bytes()
    assert flag_bytes == (tmp_path / "file.bc").read_bytes() == bundle.data
    assert flag_bytes != (tmp_path / "plain.bc").read_bytes()  # the options did change the bundle


def test_compute_arch_in_the_toml_file_writes_ptx_like_the_flag(tmp_path):
    from conftest import require_tool

    require_tool("ptxas")
    source = _project(tmp_path / "p", 'offload-arch = "compute_80"\n')
    out = tmp_path / "p" / "app.offload.bc"
    done = run_cli("compile", str(source), "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "p" / "app.offload.bc.sm_80.ptx").read_text().lstrip().startswith("//")


@pytest.mark.fast
def test_config_show_checks_flag_values_as_compile_does(tmp_path):
    bad = run_cli("config", "show", str(tmp_path), "--opt-level", "7")
    assert bad.returncode == 2 and "7 is not in the range 0<=x<=3" in bad.stderr
    also = run_cli("config", "show", str(tmp_path), "--device-image", "elf")
    assert also.returncode == 2
    good = run_cli("config", "show", str(tmp_path), "-O1")
    assert good.returncode == 0 and "opt-level = 1" in good.stdout


@pytest.mark.fast
def test_the_opt_level_range_and_type_are_one_check_everywhere(tmp_path):
    with pytest.raises(OffloadError, match="opt_level expects an integer from 0 to 3, got integer 7"):
        CompileOptions(opt_level=7)
    with pytest.raises(
        OffloadError,
        match=r"compile_file\(\): opt_level expects an integer from 0 to 3, got "
        r'string "2"',
    ):
        api.compile_file(SAXPY, "sm_80", opt_level="2")  # no str/int round trip
    (tmp_path / "mlir-offload.toml").write_text("opt-level = 4\n")
    source = _project(tmp_path / "src")
    with pytest.raises(OffloadError, match="key 'opt-level' expects an integer from 0 to 3, got integer 4"):
        api.compile_file(source, "sm_80")
    assert DEFAULTS["opt_level"] == CompileOptions().opt_level == 3


@pytest.mark.fast
def test_unknown_api_keyword_is_a_type_error():
    with pytest.raises(TypeError, match="unexpected keyword argument 'opt_levle'"):
        api.compile_file(SAXPY, "sm_80", opt_levle=2)


@pytest.mark.fast
def test_every_option_reaches_its_commands_the_file_and_config_show(tmp_path):
    from offload.commands.compile import COMMAND as compile_command
    from offload.commands.config import config_show
    from offload.commands.device import COMMAND as device_command

    commands = {"compile": compile_command, "device": device_command}
    for name, spec in SPECS.items():
        for command_name, command in commands.items():
            taken = {p.name for p in command.params}
            assert (name in taken) == (command_name in spec.commands), (name, command_name)
        assert (name in {p.name for p in config_show.params}) == spec.toml, name
    for name, spec in LINK_SPECS.items():  # link's keys too (one file for the project)
        assert (name in {p.name for p in config_show.params}) == (spec.toml or SPECS.get(name, spec).toml), name
    shown = run_cli("config", "show", str(tmp_path))
    assert shown.returncode == 0, shown.stderr
    keys = [line.lstrip("# ").split(" = ")[0] for line in shown.stdout.splitlines()[1:]]
    assert keys == list(TOML_SPECS) and set(TOML_KEYS) < set(TOML_SPECS)
    assert set(API_KEYWORDS) <= set(SPECS) and "offload_arch" in API_KEYWORDS


@pytest.mark.fast
def test_the_record_is_frozen_and_typed():
    options = CompileOptions(link_bitcode=["a.bc"])  # type: ignore[arg-type]  # a list, made a tuple: under test
    assert options.link_bitcode == ("a.bc",)
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.opt_level = 2  # type: ignore[misc]
    assert CompileOptions(line_info=True).debug_info == "lineinfo" and CompileOptions(debug=True).debug_info == "g"
    assert "cache" not in CompileOptions().cache_key() and "opt_level" in CompileOptions().cache_key()


@pytest.mark.fast
def test_the_options_tables_import_no_configuration_file_reader():
    # config.py reads mlir-offload.toml by the tables; the tables take what it read (a Protocol), so the two
    # never import each other, not even inside a function or for type checking.
    import ast

    for path in (REPO / "offload" / "options").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            names += [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            assert not any(name == "offload.config" or name.startswith("offload.commands") for name in names), path
