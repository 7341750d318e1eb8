"""link reads its arguments as clang does: a clang option taking a separate argument keeps it (the word is
never link's flag nor an input), -Xcuda-ptxas -v reaches ptxas, --resource-usage prints per kernel and arch
what ptxas reports."""

from __future__ import annotations

import shlex
import subprocess

import pytest

from conftest import REPO, require_tool, run_cli

REDUCTION = REPO / "examples" / "reduction.mlir"

PTXAS_VERBOSE = """\
 "/usr/local/cuda/bin/ptxas" -m64 -c /tmp/a.s -v -O3 -arch sm_80 -o /tmp/a.cubin
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'block_sum' for 'sm_80'
ptxas info    : Function properties for helper
    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads
ptxas info    : Function properties for block_sum
    16 bytes stack frame, 12 bytes spill stores, 8 bytes spill loads
ptxas info    : Used 255 registers, used 1 barriers, 1024 bytes smem, 432 bytes cmem[0]
ptxas info    : Compile time = 4.394 ms
 "/usr/local/cuda/bin/nvlink" -o /tmp/a.img -arch sm_90 -v /tmp/b.cubin
nvlink info    : Function properties for 'other':
nvlink info    : used 10 registers, used 1 barriers, 32 stack, 2048 bytes smem, 608 bytes cmem[0], 0 bytes lmem
"""


@pytest.mark.fast
def test_separate_argument_options_keep_their_word():
    from offload.formats.clang_arguments import input_files, own_options, values_of

    words = [
        "a.bc",
        "-Xcuda-ptxas",
        "-v",
        "-Xlinker",
        "-o",
        "-Xlinker",
        "b.o",
        "-L",
        "/opt/lib",
        "-Xarch_sm_80",
        "-O0",
        "-Xoffload-linker-nvptx64-nvidia-cuda",
        "-v",
        "-lm",
        "c.o",
    ]
    assert input_files(words) == ["a.bc", "c.o"]
    assert "-O0" not in own_options(words) and "-v" not in own_options(words)
    assert values_of(words, "-Xcuda-ptxas") == ["-v"]
    assert values_of(words, "-Xlinker") == ["-o", "b.o"]
    assert input_files(["a.o", "--", "-odd-name.o"]) == ["a.o", "-odd-name.o"]


@pytest.mark.fast
def test_data_covers_every_separate_option_clang_lists():
    """Every `-X <arg>` option clang-22 --help-hidden lists is in the data file."""
    clang = require_tool("clang-22", 22)
    from offload.formats.clang_arguments import takes_separate_argument

    text = subprocess.run([clang, "--help-hidden"], capture_output=True, text=True, check=True).stdout
    listed = {
        line.split()[0]
        for line in text.splitlines()
        if line.startswith("  -") and len(line.split()) > 1 and line.split()[1].startswith("<")
    }
    missing = sorted(option for option in listed if "<" not in option and not takes_separate_argument(option))
    assert not missing


@pytest.mark.fast
def test_ptxas_verbose_lines_become_one_line_per_kernel_and_arch():
    from offload.toolchain.resource_usage import read_ptxas_verbose

    found = read_ptxas_verbose(PTXAS_VERBOSE)
    assert [(k.kernel, k.arch) for k in found] == [("block_sum", "sm_80"), ("other", "sm_90")]
    kernel = found[0]
    assert (
        kernel.registers,
        kernel.spill_stores,
        kernel.spill_loads,
        kernel.stack,
        kernel.shared,
        kernel.constant,
    ) == (255, 12, 8, 16, 1024, 432)
    assert found[1].spill_stores is None and found[1].stack == 32 and found[1].shared == 2048
    assert "spills unknown" in found[1].line()


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    require_tool("clang-22", 22)
    require_tool("ptxas")
    tmp = tmp_path_factory.mktemp("clangargs")
    done = run_cli("compile", str(REDUCTION), "--offload-arch", "sm_80,sm_90", "-o", str(tmp / "r.bc"))
    assert done.returncode == 0, done.stderr
    return tmp / "r.bc"


def test_two_word_options_reach_clang_whole(bundle):
    done = run_cli(
        "link",
        str(bundle),
        "-Xlinker",
        "-rpath",
        "-Xlinker",
        "/opt/x",
        "-Xcuda-ptxas",
        "-v",
        "-Xarch_device",
        "-O3",
        "--dry-run",
        "-o",
        str(bundle.parent / "never"),
    )
    assert done.returncode == 0, done.stderr
    words = shlex.split(done.stdout)
    at = words.index("-rpath")
    assert words[at - 1 : at + 3] == ["-Xlinker", "-rpath", "-Xlinker", "/opt/x"]
    assert words[words.index("-Xarch_device") + 1] == "-O3"
    assert "-O2" in words  # -O3 is the device's: the host part still gets link's default level
    assert "-Xcuda-ptxas" not in words  # clang drops it at a link; the linker wrapper's ptxas gets -v
    at = words.index("-Xoffload-linker-nvptx64-nvidia-cuda")
    assert words[at + 1] == "-v"
    assert not [w for w in words if w.startswith("--offload-jobs")]  # serial device links: reports stay whole


def test_xcuda_ptxas_v_shows_ptxas_lines(bundle):
    done = run_cli("link", str(bundle), "-Xcuda-ptxas", "-v", "-o", str(bundle.parent / "app1"))
    assert done.returncode == 0, done.stderr
    assert "ptxas info    : Compiling entry function 'block_sum' for 'sm_90'" in done.stderr
    assert '"' not in done.stderr  # the tools' command lines stay hidden
    assert (bundle.parent / "app1").is_file()


def test_resource_usage_one_line_per_kernel_and_arch(bundle):
    done = run_cli("link", str(bundle), "--resource-usage", "-o", str(bundle.parent / "app2"))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split(":")[0] for line in lines] == ["sm_80 block_sum", "sm_90 block_sum"]
    assert "1024 bytes shared" in lines[0] and "registers" in lines[0] and "spill stores" in lines[0]
    assert "ptxas info" not in done.stderr


def test_compile_resource_usage_where_it_runs_ptxas(tmp_path):
    require_tool("ptxas")
    done = run_cli(
        "compile",
        str(REDUCTION),
        "--offload-arch",
        "sm_80,sm_90",
        "--device-image=cubin",
        "--host-format=obj",
        "--resource-usage",
        "-o",
        str(tmp_path / "r.o"),
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split(":")[0] for line in lines] == ["sm_80 block_sum", "sm_90 block_sum"]
    assert "1024 bytes shared" in lines[0] and "spill stores" in lines[0]
    done = run_cli(
        "compile", str(REDUCTION), "--offload-arch", "sm_80", "--resource-usage", "-o", str(tmp_path / "r.bc")
    )
    assert done.returncode == 0 and done.stdout == ""
    assert "pass --resource-usage to link" in done.stderr


def test_resource_usage_without_cuda_kernels_says_so(tmp_path, fake_hip):
    require_tool("clang-22", 22)
    done = run_cli(
        "compile", str(REPO / "examples" / "saxpy.mlir"), "--offload-arch", "gfx90a", "-o", str(tmp_path / "h.bc")
    )
    assert done.returncode == 0, done.stderr
    done = run_cli("link", str(tmp_path / "h.bc"), "--resource-usage", *fake_hip.link_flags, "-o", str(tmp_path / "h"))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "" and "ptxas and nvlink report CUDA kernels only" in done.stderr


def test_bitcode_bundle_named_without_bc_suffix_is_read_as_ir(tmp_path):
    """clang reads a file as LLVM IR only by its suffix; a bitcode bundle named app.bundle went to the host
    linker ("file format not recognized"). link hands it over as `-x ir BUNDLE` (`-x none` before later inputs)."""
    require_tool("clang-22", 22)
    bundle = tmp_path / "saxpy.bundle"
    done = run_cli("compile", str(REPO / "examples" / "saxpy.mlir"), "--offload-arch", "sm_80", "-o", str(bundle))
    assert done.returncode == 0, done.stderr
    (tmp_path / "more.c").write_text("int more(void) { return 1; }\n")
    done = run_cli("link", str(bundle), str(tmp_path / "more.c"), "-o", str(tmp_path / "app"), "--dry-run")
    assert done.returncode == 0, done.stderr
    words = shlex.split(done.stdout.strip().splitlines()[-1])
    at = words.index(str(bundle))
    assert words[at - 2 : at] == ["-x", "ir"] and words[at + 1 : at + 4] == ["-x", "none", str(tmp_path / "more.c")]
    done = run_cli("link", str(bundle), "-o", str(tmp_path / "app"))
    assert done.returncode == 0, done.stderr
    assert "-x" not in done.stderr and (tmp_path / "app").stat().st_size > 0
