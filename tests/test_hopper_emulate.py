"""Hopper programs under emulation (sm_90a): tests/data/hopper programs with CHECK lines (the header of
tests/test_emulate_programs.py: ARCHS, WRONG-FROM/WRONG-TO) run with `run --emulate` and FileChecked, their
wrong variants must fail the checks; mbarrier waits that can never complete and tensor maps the driver
would refuse are reported (docs/emulator.md)."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from conftest import REPO, run_cli
from test_emulate_programs import filecheck, read_program, require_tools, run_emulated

PROGRAMS = REPO / "tests" / "data" / "hopper"
CHECKED = [read_program(p) for p in sorted(PROGRAMS.glob("*.mlir")) if "// CHECK" in p.read_text()]
ARCH = "sm_90a"


def test_checked_programs_say_their_arch_and_wrong_variant():
    assert {p.name for p in CHECKED} >= {
        "tma_pipeline",
        "tma_swizzles",
        "cluster_reduce",
        "wgmma_gemm",
        "warpgroup_mma",
        "elect_arrive",
    }
    for program in CHECKED:
        assert program.archs == (ARCH,), program.name
        assert program.wrong_from and program.body().count(program.wrong_from) == 1, program.name


@pytest.mark.parametrize("program", CHECKED, ids=lambda p: p.name)
def test_program_passes_its_checks_under_emulation(program):
    tool = require_tools()
    done = run_emulated(program.path, ARCH, program.pass_pipeline)
    assert done.returncode == 0, done.stderr[-3000:]
    checked = filecheck(tool, program.path, ARCH, done.stdout)
    assert checked.returncode == 0, checked.stderr[-3000:]


@pytest.mark.parametrize("program", CHECKED, ids=lambda p: p.name)
def test_wrong_variant_fails_the_checks(tmp_path, program):
    tool = require_tools()
    wrong = tmp_path / f"{program.name}.wrong.mlir"
    wrong.write_text(program.wrong_source())
    done = run_emulated(wrong, ARCH, program.pass_pipeline)
    assert done.returncode == 0, done.stderr[-3000:]
    assert filecheck(tool, program.path, ARCH, done.stdout).returncode == 1  # a mismatch, not a usage error


def pipeline_variant(tmp_path, *changes: tuple[str, str]):
    require_tools()
    text = read_program(PROGRAMS / "tma_pipeline.mlir").body()
    for old, new in changes:
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / "variant.mlir"
    path.write_text(text)
    return run_cli("run", str(path), "--emulate", "--offload-arch", ARCH)


def test_a_phase_that_can_never_complete_is_reported(tmp_path):
    # Each stage expects 2048 transaction bytes, the TMA load brings 1024: the first phase never completes.
    done = pipeline_variant(tmp_path, ("%bytes = arith.constant 1024 : index", "%bytes = arith.constant 2048 : index"))
    assert done.returncode == 1 and done.stdout == ""
    assert re.fullmatch(
        r"mlir-offload emulator: error: mbarrier misuse in kernel '\w+', block \(0,0,0\), thread \(0,0,0\): "
        r"the mbarrier at shared offset 2048 is waited on for its phase of parity 0 by 256 thread\(s\), which no "
        r"thread or copy of the block can complete \(pending arrivals 0 of 1, tx-count 1024\)\n",
        done.stderr,
    ), done.stderr


def test_a_row_stride_the_driver_refuses_is_refused_by_the_encoder(tmp_path):
    # A 20x47 f32 matrix: rows 188 bytes apart, not a multiple of 16, which cuTensorMapEncodeTiled refuses.
    done = pipeline_variant(
        tmp_path, ("20x48xf32", "20x47xf32"), ("%c48 = arith.constant 48", "%c48 = arith.constant 47")
    )
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == "cuTensorMapEncodeTiled: CUresult 1\n"


def test_cluster_ids_of_clustered_and_plain_launches():
    """tests/data/hopper/cluster_launch.mlir: each thread prints its cluster id, the number of clusters and
    its block's rank (x), for 2x3x1 clusters over a 6x3x2 grid, 4x4x1 clusters over 16x16, and plain launches
    (every block a cluster of its own)."""
    require_tools()
    done = run_cli("run", str(PROGRAMS / "cluster_launch.mlir"), "--emulate", "--offload-arch", ARCH)
    assert done.returncode == 0, done.stderr
    expected: Counter[str] = Counter()
    for grid, cluster in (((6, 3, 2), (2, 3, 1)), ((2, 1, 1), None), ((16, 16, 1), (4, 4, 1)), ((4, 1, 1), None)):
        cx = cluster[0] if cluster else 1
        for bx in range(grid[0]):
            line = f"cluster {bx // cx} of {grid[0] // cx}, block {bx % cx}: {5 * (bx // cx)}"
            expected[line] += 32 * grid[1] * grid[2]
    assert Counter(done.stdout.splitlines()) == expected
