"""mlir-offload.toml: found by walking up from the input, flags override it, errors name file:line:col."""

from __future__ import annotations

import textwrap

import pytest

from conftest import run_cli
from offload.config import find_config, key_positions, load_config, project_config
from offload.errors import OffloadError
from offload.options import resolve

PROJECT = textwrap.dedent("""\
    # project settings
    offload-arch = ["sm_80", "sm_90"]
    opt-level = 2

    prec-sqrt = false
    link-bitcode = ["lib/util.bc"]
    target-clang = 19
    """)


@pytest.fixture
def project(tmp_path):
    (tmp_path / "mlir-offload.toml").write_text(PROJECT)
    nested = tmp_path / "src" / "kernels"
    nested.mkdir(parents=True)
    (nested / "app.mlir").write_text("module {}\n")
    return tmp_path


@pytest.mark.no_toolchain
def test_found_by_walking_up_from_the_input(project):
    top = project / "mlir-offload.toml"
    assert find_config(project / "src" / "kernels" / "app.mlir") == top
    assert find_config(project / "src") == top  # a folder: looked for in it, then above
    nearer = project / "src" / "mlir-offload.toml"
    nearer.write_text("opt-level = 1\n")
    assert find_config(project / "src" / "kernels" / "app.mlir") == nearer  # the nearest wins
    assert find_config(project / "src" / "kernels") == nearer
    assert find_config(project / "src") == nearer  # a folder's own config, not only those above it
    # Above the project nothing is found (unless this machine's temporary folders hold a config themselves).
    if any((folder / "mlir-offload.toml").is_file() for folder in project.parents):
        pytest.skip("a folder above the test's temporary folder holds an mlir-offload.toml")
    assert find_config(project.parent) is None


@pytest.mark.no_toolchain
def test_values_are_checked_and_paths_made_relative_to_the_file(project):
    config = load_config(project / "mlir-offload.toml")
    assert config.values["offload-arch"] == "sm_80,sm_90"
    assert config.values["opt-level"] == 2
    assert config.values["prec-sqrt"] is False
    assert config.values["link-bitcode"] == (str(project / "lib" / "util.bc"),)
    assert config.lines == {"offload-arch": 2, "opt-level": 3, "prec-sqrt": 5, "link-bitcode": 6, "target-clang": 7}


@pytest.mark.no_toolchain
def test_flags_override_file_and_file_overrides_defaults(project):
    resolved = resolve({"opt_level": 1}, project_config(project / "src" / "kernels" / "app.mlir"))
    assert (resolved.options.opt_level, resolved.origins["opt_level"]) == (1, "flag")
    assert resolved.origins["offload_arch"] == f"{project / 'mlir-offload.toml'}:2"
    assert (resolved.options.ftz, resolved.origins["ftz"]) == (False, "default")
    assert resolved.options.target_clang == 19


@pytest.mark.parametrize(
    "text, line, col, message",
    [
        ("opt-level = 2\n\n  colour = 'red'\n", 3, 3, "unknown key 'colour'"),
        ("opt_level = 2\n", 1, 1, "unknown key 'opt_level' (did you mean 'opt-level'?)"),
        (
            'ftz = true\nopt-level = "fast"\n',
            2,
            1,
            "key 'opt-level' expects an integer from 0 to 3, got string \"fast\"",
        ),
        ("ftz = 1\n", 1, 1, "key 'ftz' expects true or false, got integer 1"),
        ('x = """\nopt-level = 9\n"""\n[float]\nftz = true\n', 1, 1, "unknown key 'x'"),
        ('device-image = "elf"\n', 1, 1, 'key \'device-image\' expects one of "bitcode", "cubin", "ptx"'),
        ("\n[float]\nftz = true\n", 2, 2, "unknown key 'float'"),
    ],
)
@pytest.mark.no_toolchain
def test_bad_keys_and_types_are_located(tmp_path, text, line, col, message):
    path = tmp_path / "mlir-offload.toml"
    path.write_text(text)
    with pytest.raises(OffloadError) as e:
        load_config(path)
    assert e.value.render().startswith(f"{path}:{line}:{col}: error: {message}")


@pytest.mark.no_toolchain
def test_key_positions_skip_strings_arrays_and_comments():
    text = 'a = [1, # ]\n  2]\nb = """\nc = 1\n"""\n"q" = \'x\'\n[t]\nd.e = {f = 1}\n'
    positions = key_positions(text)
    assert positions[("a",)] == (1, 1)
    assert positions[("b",)] == (3, 1)
    assert ("c",) not in positions
    assert positions[("q",)] == (6, 1)
    assert positions[("t", "d", "e")] == (8, 3)


@pytest.mark.no_toolchain
def test_cli_error_is_one_line_with_location_and_exit_1(project):
    (project / "mlir-offload.toml").write_text("opt-level = 2\nbogus = 1\n")
    result = run_cli("config", "show", str(project / "src" / "kernels" / "app.mlir"))
    assert result.returncode == 1
    assert result.stderr.strip() == f"{project / 'mlir-offload.toml'}:2:1: error: unknown key 'bogus'"
    assert "Traceback" not in result.stderr


@pytest.mark.no_toolchain
def test_cli_syntax_error_has_location(tmp_path):
    (tmp_path / "mlir-offload.toml").write_text("opt-level = 2\nftz = \n")
    result = run_cli("config", "show", str(tmp_path))
    assert result.returncode == 1
    assert result.stderr.startswith(f"{tmp_path / 'mlir-offload.toml'}:2:")
    assert "invalid TOML" in result.stderr


@pytest.mark.no_toolchain
def test_config_show_prints_values_and_origins(project):
    result = run_cli("config", "show", str(project / "src" / "kernels" / "app.mlir"), "--opt-level", "1", "--ftz")
    assert result.returncode == 0, result.stderr
    rows = {
        line.split(" = ")[0]: line for line in result.stdout.splitlines() if " = " in line and not line.startswith("#")
    }
    assert rows["opt-level"].split("#")[0].strip() == "opt-level = 1" and rows["opt-level"].endswith("# flag")
    assert rows["ftz"].startswith("ftz = true") and rows["ftz"].endswith("# flag")
    assert rows["offload-arch"].startswith('offload-arch = "sm_80,sm_90"')
    assert rows["offload-arch"].endswith(f"# {project / 'mlir-offload.toml'}:2")
    assert rows["prec-div"].startswith("prec-div = true") and rows["prec-div"].endswith("# default")


@pytest.mark.no_toolchain
def test_config_show_output_is_a_valid_config(project, tmp_path_factory):
    result = run_cli("config", "show", str(project))
    other = tmp_path_factory.mktemp("copy")
    (other / "mlir-offload.toml").write_text(result.stdout)
    again = load_config(other / "mlir-offload.toml")
    assert again.values["opt-level"] == 2 and again.values["target-clang"] == 19


def test_ldflags_and_cflags_are_what_a_cuda_link_needs(tmp_path):
    from conftest import require_tool

    require_tool("ptxas")
    (tmp_path / "mlir-offload.toml").write_text('cuda-path = "/usr/local/cuda"\n')
    ld = run_cli("config", "--ldflags", cwd=tmp_path)
    assert ld.returncode == 0, ld.stderr
    assert ld.stdout.split() == [
        "--offload-new-driver",
        "--cuda-path=/usr/local/cuda",
        "-L/usr/local/cuda/lib64",
        "-Wno-unknown-cuda-version",
        "-lcudart",
    ]
    cf = run_cli("config", "--cflags", cwd=tmp_path)
    assert cf.stdout.split()[:3] == ["--offload-new-driver", "-fgpu-rdc", "--cuda-path=/usr/local/cuda"]


@pytest.mark.no_toolchain
def test_mk_and_cmake_paths_exist():
    import os

    mk = run_cli("config", "--mk").stdout.strip()
    cmake = run_cli("config", "--cmake-dir").stdout.strip()
    assert mk.endswith("mlir-offload.mk") and os.path.isfile(mk)
    assert os.path.isfile(os.path.join(cmake, "MLIROffload.cmake"))


def test_config_show_names_the_clang_link_uses(tmp_path):
    """Not `clang`: the clang link's own search finds for the target clang, as `link` runs it."""
    from conftest import REPO, dry_run_words, require_tool

    require_tool("clang-22", 22)
    shown = run_cli("config", "show", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    (row,) = [line for line in shown.stdout.splitlines() if line.startswith("clang = ")]
    value = row.split("#")[0].split(" = ", 1)[1].strip().strip('"')
    assert value == run_cli("config", "--clang", cwd=tmp_path).stdout.strip()
    assert "# default: link's search for clang 22 (clang 22." in row
    bundle = tmp_path / "saxpy.offload.bc"
    source = REPO / "examples" / "saxpy.mlir"
    assert run_cli("compile", str(source), "--offload-arch", "sm_80", "-o", str(bundle)).returncode == 0
    dry = run_cli("link", str(bundle), "-o", str(tmp_path / "app"), "--dry-run", cwd=tmp_path)
    assert dry.returncode == 0, dry.stderr
    _, words = dry_run_words(dry.stdout.strip().splitlines()[-1])
    assert words[0] == value
