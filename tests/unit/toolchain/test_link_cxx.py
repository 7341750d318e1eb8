"""link links C++ objects as nvcc does: an object or archive calling into the C++ runtime (std::string,
std::vector, new/delete) makes clang link as clang++ (--driver-mode=g++), so the C++ runtime comes along;
C objects and links that name their own runtime are left as they are; link --emulate does the same."""

from __future__ import annotations

import shlex
import subprocess

import pytest

from conftest import REPO, require_tool, run_cli

SAXPY = REPO / "examples" / "saxpy.mlir"
CXX_SOURCE = """\
#include <string>
#include <vector>
extern "C" unsigned long count_words() { std::vector<std::string> v{"alpha", "beta"}; return v.size(); }
"""
C_SOURCE = "unsigned long count_words(void) { return 2; }\n"


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    clang = require_tool("clang-22", 22)
    tmp = tmp_path_factory.mktemp("cxx")
    (tmp / "count.cpp").write_text(CXX_SOURCE)
    (tmp / "count.c").write_text(C_SOURCE)
    subprocess.run([clang, "-c", str(tmp / "count.cpp"), "-o", str(tmp / "count.o")], check=True)
    subprocess.run([clang, "-c", str(tmp / "count.c"), "-o", str(tmp / "plain.o")], check=True)
    (tmp / "lib").mkdir()
    subprocess.run(["ar", "rcs", str(tmp / "lib" / "libcount.a"), str(tmp / "count.o")], check=True)
    done = run_cli("compile", str(SAXPY), "--offload-arch", "sm_80", "-o", str(tmp / "s.bc"))
    assert done.returncode == 0, done.stderr
    return tmp


def planned(inputs, *words) -> list[str]:
    done = run_cli("link", str(inputs / "s.bc"), *words, "--dry-run", "-o", str(inputs / "never"))
    assert done.returncode == 0, done.stderr
    return shlex.split(done.stdout)


def test_cxx_objects_and_archives_link_as_cxx(inputs):
    assert "--driver-mode=g++" in planned(inputs, str(inputs / "count.o"))
    assert "--driver-mode=g++" in planned(inputs, "-L", str(inputs / "lib"), "-lcount")
    assert "--driver-mode=g++" in planned(inputs, f"-L{inputs / 'lib'}", "-l", "count")
    assert "--driver-mode=g++" not in planned(inputs, str(inputs / "plain.o"))
    assert "--driver-mode=g++" not in planned(inputs, str(inputs / "count.o"), "-lstdc++")


def test_cxx_object_links_without_naming_the_runtime(inputs):
    require_tool("ptxas")
    done = run_cli(
        "link", str(inputs / "s.bc"), str(inputs / "count.o"), "-Wl,-u,count_words", "-o", str(inputs / "app")
    )
    assert done.returncode == 0, done.stderr
    needed = subprocess.run(["readelf", "-d", str(inputs / "app")], capture_output=True, text=True).stdout
    assert "libstdc++" in needed


@pytest.mark.fast
def test_archive_reader_stops_at_bad_headers():
    from offload.toolchain.cxx_inputs import archive_members, uses_cxx_runtime

    member = b"hello"
    header = (
        b"a.o/".ljust(16)
        + b"0".ljust(12)
        + b"0".ljust(6)
        + b"0".ljust(6)
        + b"644".ljust(8)
        + str(len(member)).encode().ljust(10)
        + b"`\n"
    )
    archive = b"!<arch>\n" + header + member + b"\n"
    assert list(archive_members(archive)) == [member]
    for cut in range(len(archive)):
        assert list(archive_members(archive[:cut])) in ([], [member])
        assert uses_cxx_runtime(archive[:cut], "cut.a") is False
    huge = archive.replace(str(len(member)).encode().ljust(10), b"9999999999")
    assert list(archive_members(huge)) == []


MAIN_SOURCE = """\
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>
extern "C" int32_t mlir_saxpy(float a, int64_t n);
int main() {
  std::vector<int64_t> sizes{64, 1000};
  std::string name = "saxpy";
  int wrong = 0;
  for (int64_t n : sizes) wrong += mlir_saxpy(2.0f, n);
  std::printf("%s: %zu runs, %d wrong\\n", name.c_str(), sizes.size(), wrong);
  return wrong;
}
"""


def test_cxx_main_links_as_cxx_with_emulate(tmp_path):
    # A main.cpp using std::vector and std::string, compiled with clang++-22 -c, links under --emulate
    # without -lstdc++ (before, clang linked it as C: undefined std:: symbols).
    from emulation import require_emulation

    require_emulation()
    (tmp_path / "main.cpp").write_text(MAIN_SOURCE)
    done = subprocess.run(
        [require_tool("clang++-22", 22), "-O2", "-c", str(tmp_path / "main.cpp"), "-o", str(tmp_path / "main.o")],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    # hpc-make's saxpy (int32_t mlir_saxpy(float, int64_t)), away from the example's mlir-offload.toml
    (tmp_path / "saxpy.mlir").write_text((REPO / "examples" / "hpc-make" / "saxpy.mlir").read_text())
    done = run_cli("compile", str(tmp_path / "saxpy.mlir"), "--offload-arch", "sm_80", "-o", str(tmp_path / "s.bc"))
    assert done.returncode == 0, done.stderr
    app = tmp_path / "app"
    done = run_cli("link", "--emulate", str(tmp_path / "main.o"), str(tmp_path / "s.bc"), "-o", str(app))
    assert done.returncode == 0, done.stderr
    run = subprocess.run([str(app)], capture_output=True, text=True, timeout=300)
    assert run.stdout == "saxpy: 2 runs, 0 wrong\n" and run.returncode == 0
