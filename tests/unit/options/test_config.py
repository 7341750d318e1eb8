"""mlir-offload.toml: found by walking up from the input, flags override it, errors name file:line:col."""

from __future__ import annotations

import os
import shutil
import subprocess
import textwrap

import pytest

from conftest import REPO, run_cli
from offload.config import find_config, key_positions, load_config, project_config
from offload.errors import OffloadError
from offload.options import resolve
from offload.trust import TRUSTED_CONFIG_ENVIRONMENT as TRUSTED

SAXPY = REPO / "examples" / "saxpy.mlir"

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
    assert config is not None
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
    assert again is not None
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
        "-lm",
    ]
    cf = run_cli("config", "--cflags", cwd=tmp_path)
    assert cf.stdout.split()[:4] == [
        "--offload-new-driver",
        "-fgpu-rdc",
        "-foffload-lto",
        "--cuda-path=/usr/local/cuda",
    ]


# CUDA C++ launching an MLIR kernel (examples/cmake/vadd.mlir's) with <<<>>>: memrefs as MLIR's expanded
# descriptors (allocated, aligned, offset, size, stride).
LAUNCH_CU = """#include <cstdint>
extern "C" __global__ void vadd(float *a0, float *a1, int64_t ao, int64_t as, int64_t ast,
                                float *b0, float *b1, int64_t bo, int64_t bs, int64_t bst,
                                float *c0, float *c1, int64_t co, int64_t cs, int64_t cst, int64_t n);
int main() {
  const int n = 256;
  float *a, *c;
  cudaMalloc(&a, n * sizeof(float));
  cudaMalloc(&c, n * sizeof(float));
  vadd<<<(n + 63) / 64, 64>>>(a, a, 0, n, 1, a, a, 0, n, 1, c, c, 0, n, 1, n);
  return cudaDeviceSynchronize() != cudaSuccess;
}
"""


def test_cflags_are_what_a_cu_file_needs_to_launch_mlir_kernels(tmp_path, fake_cuda):
    """A .cu with a <<<>>> launch of an MLIR kernel compiles with exactly `config --cflags` and links with the
    bundle into one device image that registers the kernel. Measured necessary: -foffload-lto (without it
    nvlink refuses the launch: 'not declared __global__ in all source files') and, where the toolkit lacks
    them, stand-ins for the headers clang's CUDA wrapper includes (a minimal CUDA 13 has no
    curand_mtgp32_kernel.h)."""
    from conftest import REPO, require_tool

    clangxx = require_tool("clang++-22", 22)
    require_tool("ptxas")
    flags = run_cli("config", "--cflags", cwd=tmp_path).stdout.split()
    source, obj, bundle, app = (
        tmp_path / "launch.cu",
        tmp_path / "launch.o",
        tmp_path / "vadd.offload.bc",
        tmp_path / "app",
    )
    source.write_text(LAUNCH_CU)
    compile_cu = [clangxx, "-x", "cuda", *flags, "--offload-arch=sm_80", "-c", str(source), "-o", str(obj)]
    done = subprocess.run(compile_cu, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    vadd = REPO / "examples" / "cmake" / "vadd.mlir"
    assert run_cli("compile", str(vadd), "--offload-arch", "sm_80", "-o", str(bundle)).returncode == 0
    done = run_cli("link", str(bundle), str(obj), "-o", str(app))
    assert done.returncode == 0, done.stderr
    assert run_cli("verify", str(app)).returncode == 0
    assert fake_cuda.run(app).kernels_registered() == ["vadd"]  # once: the .cu's declaration registers nothing
    # Each flag is needed: without -foffload-lto the device link fails.
    without = [word for word in compile_cu if word != "-foffload-lto"]
    assert subprocess.run(without, capture_output=True).returncode == 0
    done = run_cli("link", str(bundle), str(obj), "-o", str(tmp_path / "app2"))
    assert done.returncode == 1 and "not declared __global__" in done.stderr


@pytest.mark.no_toolchain
def test_mk_and_cmake_paths_exist():
    import os

    mk = run_cli("config", "--mk").stdout.strip()
    cmake = run_cli("config", "--cmake-dir").stdout.strip()
    assert mk.endswith("mlir-offload.mk") and os.path.isfile(mk)
    assert os.path.isfile(os.path.join(cmake, "MLIROffload.cmake"))


# ---- whose mlir-offload.toml is applied (offload/trust.py): as git since CVE-2022-24765, another user's
# file, or one others can write, in a folder above the input is not applied, with one warning naming the
# file and MLIR_OFFLOAD_TRUSTED_CONFIG.

as_root = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown to another user needs root")
OTHER_USER = 12345  # no such user: a file of "another user" in a temporary folder
OTHER_GROUP = 4242


def untrusted_warning(path) -> str:
    return f"mlir-offload: warning: {path} is not applied: it "


@as_root
def test_another_users_config_is_not_applied(tmp_path):
    from conftest import require_tool

    require_tool("ptxas")
    (tmp_path / "her-cuda").symlink_to("/usr/local/cuda")  # a usable toolkit at a path of hers
    toml = tmp_path / "mlir-offload.toml"
    toml.write_text(f'cuda-path = "{tmp_path / "her-cuda"}"\nlink-bitcode = ["missing.bc"]\n')
    os.chown(toml, OTHER_USER, OTHER_USER)
    (tmp_path / "src").mkdir()
    shutil.copy(SAXPY, tmp_path / "src" / "saxpy.mlir")
    warning = untrusted_warning(toml) + f"belongs to another user (uid {OTHER_USER}); to apply it, add its folder "
    for args in (("config", "--cflags"), ("config", "--ldflags")):
        done = run_cli(*args, cwd=tmp_path / "src")
        assert done.returncode == 0, done.stderr
        assert "her-cuda" not in done.stdout and "--cuda-path=" in done.stdout
        assert done.stderr.splitlines() == [warning + "to MLIR_OFFLOAD_TRUSTED_CONFIG (docs/cli.md)"]
    shown = run_cli("config", "show", cwd=tmp_path / "src")
    assert shown.stdout.splitlines()[0] == f"# configuration file: none ({toml} is not trusted: not applied)"
    assert "her-cuda" not in shown.stdout and len(shown.stderr.splitlines()) == 1
    compiled = run_cli("compile", "saxpy.mlir", "--offload-arch", "sm_80", "-o", "saxpy.bc", cwd=tmp_path / "src")
    assert compiled.returncode == 0, compiled.stderr  # link-bitcode's missing library was never asked for
    assert compiled.stderr.splitlines() == [warning + "to MLIR_OFFLOAD_TRUSTED_CONFIG (docs/cli.md)"]
    # Trusted by name (its folder or the file), by its group, or all: applied, silently.
    os.chown(toml, OTHER_USER, OTHER_GROUP)
    for trusted in (str(tmp_path), str(toml), f"/nowhere{os.pathsep}group={OTHER_GROUP}", "*"):
        done = run_cli("config", "--cflags", cwd=tmp_path / "src", env={**os.environ, TRUSTED: trusted})
        assert done.returncode == 0 and done.stderr == "", (trusted, done.stderr)
        assert f"--cuda-path={tmp_path / 'her-cuda'}" in done.stdout.split(), trusted
    failed = run_cli(
        "compile",
        "saxpy.mlir",
        "--offload-arch",
        "sm_80",
        "-o",
        "s.bc",
        cwd=tmp_path / "src",
        env={**os.environ, TRUSTED: str(tmp_path)},
    )
    assert failed.returncode == 1 and "missing.bc" in failed.stderr  # applied: its library is looked for


@as_root
@pytest.mark.parametrize("mode, group", [(0o666, 0), (0o664, OTHER_GROUP)])
def test_a_config_others_can_write_is_not_applied(tmp_path, mode, group):
    toml = tmp_path / "mlir-offload.toml"
    toml.write_text("opt-level = 1\n")
    os.chown(toml, os.geteuid(), group)
    toml.chmod(mode)
    shown = run_cli("config", "show", str(tmp_path))
    assert shown.returncode == 0, shown.stderr
    assert "opt-level = 3" in shown.stdout  # the default, not the file's 1
    [line] = shown.stderr.splitlines()
    written_by = "every user" if mode & 0o002 else f"its group (gid {OTHER_GROUP}, mode 664)"
    assert line.startswith(untrusted_warning(toml) + f"can be written by {written_by}"), line
    toml.chmod(0o644)  # the user's own, writable by no one else: applied
    shown = run_cli("config", "show", str(tmp_path))
    assert "opt-level = 1" in shown.stdout and shown.stderr == ""


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
