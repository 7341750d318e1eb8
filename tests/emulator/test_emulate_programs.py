"""Our own programs for each semantic point the emulator must keep (tests/data/emulate/*.mlir), run with
`mlir-offload run PROGRAM --emulate --offload-arch ARCH` and checked by FileCheck against the program's own
CHECK lines; each program also states a deliberately wrong kernel that must fail those checks.

A program's header says what it needs:
  // ARCHS: sm_80 gfx90a              the archs it runs for (sm_80, gfx90a, gfx1100; a CHECK line for one
                                      arch only uses the prefix SM80, GFX90A or GFX1100; FileCheck gets
                                      --check-prefixes=CHECK,<ARCH>)
  // PASS-PIPELINE: builtin.module(...)  given as --pass-pipeline (pre-lowering passes, as upstream's RUN lines)
  // WRONG: what the wrong variant does
  // WRONG-FROM: text                 consecutive lines form the text replaced (exactly once) by the
  // WRONG-TO: text                   consecutive WRONG-TO lines: the wrong kernel
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import REPO, find_tool, require_tool, run_cli
from emulation import require_emulation

PROGRAMS = REPO / "tests" / "data" / "emulate"


@dataclass(frozen=True)
class Program:
    path: Path
    archs: tuple[str, ...]
    pass_pipeline: str
    wrong_from: str
    wrong_to: str

    @property
    def name(self) -> str:
        return self.path.stem

    def body(self) -> str:
        """The program without its WRONG lines (which quote the text they replace)."""
        return "\n".join(line for line in self.path.read_text().splitlines() if not line.startswith("// WRONG"))

    def wrong_source(self) -> str:
        return self.body().replace(self.wrong_from, self.wrong_to)


def read_program(path: Path) -> Program:
    lines = path.read_text().splitlines()

    def field(key: str) -> list[str]:
        prefix = f"// {key}: "
        return [line[len(prefix) :] for line in lines if line.startswith(prefix)]

    archs = tuple(" ".join(field("ARCHS")).split())
    return Program(
        path, archs, " ".join(field("PASS-PIPELINE")), "\n".join(field("WRONG-FROM")), "\n".join(field("WRONG-TO"))
    )


ALL = [read_program(p) for p in sorted(PROGRAMS.glob("*.mlir"))]

# Known gaps, each an expected failure that must start passing once fixed (strict).
KNOWN_GAPS = {
    ("all_reduce", "gfx90a"): "MLIR 22's ROCDL lowering of width-limited shuffles tests the source lane against "
    "(lane + width) & -width, right only for power-of-two widths; the all-reduce rewrite's "
    "second stage over 3 warp results (96-thread blocks) uses width 3",
}


# Of those, the gaps where the program does not run at all: its wrong variant cannot run either.
GAPS_THAT_STOP_THE_RUN: set[tuple[str, str]] = set()


def case(program: Program, arch: str, wrong: bool = False):
    gap = KNOWN_GAPS.get((program.name, arch))
    if wrong and (program.name, arch) not in GAPS_THAT_STOP_THE_RUN:
        gap = None
    marks = [pytest.mark.xfail(reason=gap, strict=True)] if gap else []
    return pytest.param(program, arch, id=f"{program.name}-{arch}", marks=marks)


CASES = [case(program, arch) for program in ALL for arch in program.archs]
WRONG_CASES = [case(program, arch, wrong=True) for program in ALL for arch in program.archs]


def check_prefixes(arch: str) -> str:
    return f"CHECK,{arch.upper().replace('_', '')}"


def require_tools() -> str:
    """FileCheck's path; skip where FileCheck or the emulator's tools (clang-22, opt-22, LLVM 22's headers)
    are missing (fail in CI, which installs them)."""
    require_emulation()
    filecheck = find_tool("FileCheck-22", 22)
    missing = [
        name
        for name, found in (("FileCheck (llvm-22-tools)", filecheck), ("clang-22", find_tool("clang-22", 22)))
        if found is None
    ]
    if missing:
        message = f"{' and '.join(missing)} not installed (scripts/setup installs them)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    assert filecheck is not None
    return filecheck


def run_emulated(source: Path, arch: str, pass_pipeline: str = "") -> subprocess.CompletedProcess:
    pipeline = ("--pass-pipeline", pass_pipeline) if pass_pipeline else ()
    return run_cli("run", str(source), *pipeline, "--emulate", "--offload-arch", arch)


def filecheck(filecheck_path: str, program: Path, arch: str, output: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            filecheck_path,
            str(program),
            f"--check-prefixes={check_prefixes(arch)}",
            "--allow-unused-prefixes",
            "--dump-input=fail",
        ],
        input=output,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_every_program_says_its_archs_checks_and_wrong_variant():
    assert len(ALL) >= 10
    for program in ALL:
        text = program.path.read_text()
        assert program.archs and set(program.archs) <= {"sm_80", "gfx90a", "gfx1100"}, program.name
        assert "// CHECK" in text, program.name
        assert program.wrong_from and program.wrong_from != program.wrong_to, program.name
        assert program.body().count(program.wrong_from) == 1, f"{program.name}: WRONG-FROM must occur once"


@pytest.mark.parametrize("program, arch", CASES)
def test_program_passes_its_checks_under_emulation(program, arch):
    tool = require_tools()
    done = run_emulated(program.path, arch, program.pass_pipeline)
    assert done.returncode == 0, done.stderr[-3000:]
    checked = filecheck(tool, program.path, arch, done.stdout)
    assert checked.returncode == 0, checked.stderr[-3000:]


# Under --sanitize (docs/emulator.md): the same output, no report. A bare --sanitize leaves leakcheck out
# (asked for by name): most of these programs never free their buffers, which it rightly reports.
SANITIZE_CHECKS = "--sanitize"
SANITIZE_CASES = [case(program, program.archs[0]) for program in ALL]


@pytest.mark.parametrize("program, arch", SANITIZE_CASES)
def test_program_passes_its_checks_under_sanitize(program, arch):
    tool = require_tools()
    pipeline = ("--pass-pipeline", program.pass_pipeline) if program.pass_pipeline else ()
    done = run_cli("run", str(program.path), *pipeline, "--emulate", SANITIZE_CHECKS, "--offload-arch", arch)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "error" not in done.stderr, done.stderr[-3000:]
    checked = filecheck(tool, program.path, arch, done.stdout)
    assert checked.returncode == 0, checked.stderr[-3000:]


@pytest.mark.parametrize("program, arch", WRONG_CASES)
def test_wrong_kernel_fails_the_checks(tmp_path, program, arch):
    tool = require_tools()
    wrong = tmp_path / f"{program.name}.wrong.mlir"
    wrong.write_text(program.wrong_source())
    done = run_emulated(wrong, arch, program.pass_pipeline)
    # The wrong kernel is a valid program that computes wrong numbers: it runs, and its output fails.
    assert done.returncode == 0, done.stderr[-3000:]
    checked = filecheck(tool, program.path, arch, done.stdout)
    assert checked.returncode != 0, f"the wrong variant of {program.name} passed its checks"


def test_subgroup_reduce_it_cannot_expand_is_one_located_error(tmp_path):
    source = tmp_path / "half.mlir"
    source.write_text("""module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @r(%out: memref<?xf16>) kernel {
      %t = gpu.thread_id x
      %v = arith.constant 1.0 : f16
      %s = gpu.subgroup_reduce add %v : (f16) -> f16
      memref.store %s, %out[%t] : memref<?xf16>
      gpu.return
    }
  }
}
""")
    done = run_cli("compile", str(source), "--offload-arch", "sm_80", "-o", str(tmp_path / "half.bc"))
    assert done.returncode == 1
    assert done.stderr.startswith(f"{source}:6:12: error: gpu.subgroup_reduce add of f16 ")
    assert done.stderr.count("\n") == 1 and not (tmp_path / "half.bc").exists()


FIRST_ACTIVE_LANE = """module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @first(%out: memref<?xi32>) kernel {
      %t = gpu.thread_id x
      %v = arith.index_cast %t : index to i32
      %f = gpu.subgroup_broadcast %v, first_active_lane : i32
      memref.store %f, %out[%t] : memref<?xi32>
      gpu.return
    }
  }
}
"""


def test_first_active_lane_broadcast_shuffles_among_the_active_lanes(tmp_path):
    """MLIR 22's NVVM conversion has no gpu.subgroup_broadcast: mlir-offload's expansion reads the lowest
    lane of `activemask` with a shfl.sync.idx whose member mask is that activemask (not the whole warp,
    which divergent code may not be)."""
    require_tool("ptxas")
    source = tmp_path / "first.mlir"
    source.write_text(FIRST_ACTIVE_LANE)
    bundle = tmp_path / "first.bc"
    done = run_cli("compile", str(source), "--offload-arch", "sm_80", "--device-image", "ptx", "-o", str(bundle))
    assert done.returncode == 0, done.stderr
    lines = [line.split() for line in Path(f"{bundle}.sm_80.ptx").read_text().splitlines()]
    (mask,) = [words[1].rstrip(";") for words in lines if words and words[0] == "activemask.b32"]
    (shuffle,) = [words for words in lines if words and words[0] == "shfl.sync.idx.b32"]
    assert shuffle[-1] == f"{mask};"
