"""Hopper programs under emulation (sm_90a): tests/data/hopper programs with CHECK lines (the header of
tests/emulator/test_emulate_programs.py: ARCHS, WRONG-FROM/WRONG-TO) run with `run --emulate` and FileChecked, their
wrong variants must fail the checks; mbarrier waits that can never complete and tensor maps the driver
would refuse are reported (docs/emulator.md)."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from test_emulate_programs import filecheck, read_program, require_tools, run_emulated

from conftest import REPO, run_cli

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
        "stmatrix",
        "bulk_multicast",
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
def test_program_runs_clean_under_sanitize(program):
    """The accesses the runtime makes for TMA, bulk copies, wgmma, stmatrix and distributed shared memory
    are checked (memcheck, initcheck) and none is reported for these valid programs."""
    tool = require_tools()
    done = run_cli("run", str(program.path), "--emulate", "--sanitize", "--offload-arch", ARCH)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "error" not in done.stderr
    checked = filecheck(tool, program.path, ARCH, done.stdout)
    assert checked.returncode == 0, checked.stderr[-3000:]


def test_sanitize_reports_a_wgmma_reading_unwritten_shared_memory(tmp_path):
    """wgmma_gemm without the TMA load of B (and its bytes): the first wgmma reads B's tile never written."""
    source = (PROGRAMS / "wgmma_gemm.mlir").read_text()
    load_b = "        nvgpu.tma.async.load %mapB[%c0, %c0], %bar[%c0] to %sB : !mapB, !barriers -> memref<32x64xf16, 3>"
    load_b += "\n"
    bytes_ab = "      %bytes = arith.constant 12288 : index\n"
    assert source.count(load_b) == 1 and source.count(bytes_ab) == 1
    source = source.replace(load_b, "").replace(bytes_ab, "      %bytes = arith.constant 8192 : index\n")
    (tmp_path / "unloaded.mlir").write_text(source)
    line = next(n for n, x in enumerate(source.splitlines(), 1) if "nvvm.wgmma.mma_async" in x)
    done = run_cli("run", "unloaded.mlir", "--emulate", "--sanitize", "--offload-arch", ARCH, cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.splitlines()[0] == (
        f"unloaded.mlir:{line}:13: error: initcheck: uninitialized read of 2 bytes of workgroup memory at offset "
        "8192 in kernel 'main_kernel', block (0,0,0), thread (127,0,0): never written in this block"
    )


def test_sanitize_reports_the_cluster_reduction_reading_slots_no_block_stored(tmp_path):
    """cluster_reduce's wrong variant (each block stores into its own slots): rank 0 sums slots 1..3, which
    no block of its cluster wrote (stores through mapa are checked in the block they reach)."""
    program = next(p for p in CHECKED if p.name == "cluster_reduce")
    source = program.wrong_source()
    (tmp_path / "wrong.mlir").write_text(source)
    line = next(n for n, x in enumerate(source.splitlines(), 1) if "memref.load %slots[%j]" in x)
    done = run_cli("run", "wrong.mlir", "--emulate", "--sanitize", "--offload-arch", ARCH, cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.splitlines()[0].startswith(
        f"wrong.mlir:{line}:16: error: initcheck: uninitialized read of 4 bytes of workgroup variable 'slots' "
        "at offset 260 in kernel 'reduce', block (0,0,0), thread (0,0,0)"
    )


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


def test_predicated_mbarrier_and_tma_ops_run_as_mlir_writes_them(tmp_path):
    """With `predicate = ...`, MLIR 22 writes mbarrier.init, arrive.expect_tx and the TMA load as inline PTX
    ("@$N ..."): recognized, and run only where the predicate holds (every thread of the block reaches the
    predicated ops of the loop; if all of them arrived, the phase would get 256 arrivals where it expects 1)."""
    tool = require_tools()
    program = read_program(PROGRAMS / "tma_pipeline.mlir")
    done = pipeline_variant(
        tmp_path,
        ("nvgpu.mbarrier.init %bar[%c0], %c1 :", "nvgpu.mbarrier.init %bar[%c0], %c1, predicate = %leader :"),
        ("nvgpu.mbarrier.init %bar[%c1], %c1 :", "nvgpu.mbarrier.init %bar[%c1], %c1, predicate = %leader :"),
        ("arrive.expect_tx %bar[%i], %bytes :", "arrive.expect_tx %bar[%i], %bytes, predicate = %leader :"),
        ("%bar[%i] to %buf :", "%bar[%i] to %buf, predicate = %leader :"),
        ("scf.if %issue {", "scf.if %more {"),
        ("arrive.expect_tx %bar[%stage], %bytes :", "arrive.expect_tx %bar[%stage], %bytes, predicate = %issue :"),
        ("%bar[%stage] to %buf :", "%bar[%stage] to %buf, predicate = %issue :"),
    )
    assert done.returncode == 0, done.stderr
    assert filecheck(tool, program.path, ARCH, done.stdout).returncode == 0


POLL = """\
!barriers = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
module attributes {gpu.container_module} {
  func.func @main() {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%nx = %c32, %ny = %c1, %nz = %c1) {
      %c0 = arith.constant 0 : index
      %c2 = arith.constant 2 : index
      %true = arith.constant true
      %bar = nvgpu.mbarrier.create -> !barriers
      %leader = arith.cmpi eq, %tx, %c0 : index
      scf.if %leader {
        nvgpu.mbarrier.init %bar[%c0], %c2 : !barriers
        %token = nvgpu.mbarrier.arrive %bar[%c0] : !barriers -> !nvgpu.mbarrier.token
        scf.while : () -> () {
          %done = nvgpu.mbarrier.test.wait %bar[%c0], %token : !barriers, !nvgpu.mbarrier.token
          %again = arith.xori %done, %true : i1
          scf.condition(%again)
        } do {
          scf.yield
        }
      }
      gpu.barrier
      gpu.terminator
    }
    return
  }
}
"""


def test_a_poll_that_can_never_succeed_is_reported(tmp_path):
    """A loop around nvgpu.mbarrier.test.wait (a poll, not a blocking wait) on a phase that expects two
    arrivals and gets one, while the other threads wait at a barrier: reported, not spun for ever."""
    require_tools()
    path = tmp_path / "poll.mlir"
    path.write_text(POLL)
    done = run_cli("run", str(path), "--emulate", "--offload-arch", ARCH)
    assert done.returncode == 1 and done.stdout == ""
    assert re.fullmatch(
        r"mlir-offload emulator: error: mbarrier misuse in kernel '\w+', block \(0,0,0\), thread \(0,0,0\): "
        r"the mbarrier at shared offset 0 is waited on for its phase of parity 0 by 1 thread\(s\), which no "
        r"thread or copy of the block can complete \(pending arrivals 1 of 2, tx-count 0\)\n",
        done.stderr,
    ), done.stderr


def test_user_inline_assembly_is_refused_before_a_pass_pipeline_runs(tmp_path):
    """The check sees the program as written: a --pass-pipeline whose nvgpu conversion writes MLIR's own
    inline PTX (mma.sp.sync, recognized later) does not hide the user's own llvm.inline_asm, still named
    at its line."""
    from test_emulator_reports import INLINE_ASM

    require_tools()
    source = tmp_path / "asm.mlir"
    source.write_text(INLINE_ASM)
    pipeline = "builtin.module(gpu.module(convert-nvgpu-to-nvvm),canonicalize)"
    done = run_cli(
        "compile",
        str(source),
        "--offload-arch",
        ARCH,
        "--emulate",
        "--pass-pipeline",
        pipeline,
        "-o",
        str(tmp_path / "a"),
    )
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"{source}:5:12: error: --emulate: 'llvm.inline_asm' (inline assembly) cannot be emulated on the CPU"
    ]


def base_offset_variant(tmp_path, with_base: bool):
    """wgmma_gemm with tile A 384 bytes past a 1024-byte boundary (TMA swizzles by address: its 128-byte
    pattern starts at row 3 there); the descriptors of A carry base offset 3 (bits 49-51) or not."""
    program = read_program(PROGRAMS / "wgmma_gemm.mlir")
    text = program.body()
    changes = [
        (
            'memref.global "private" @tileA : memref<64x64xf16, 3> {alignment = 1024 : i64}',
            'memref.global "private" @tileRaw : memref<8576xi8, 3> {alignment = 1024 : i64}',
        ),
        (
            "%sA = memref.get_global @tileA : memref<64x64xf16, 3>",
            "%rawA = memref.get_global @tileRaw : memref<8576xi8, 3>\n      %c384 = arith.constant 384 : index\n"
            "      %sA = memref.view %rawA[%c384][] : memref<8576xi8, 3> to memref<64x64xf16, 3>",
        ),
    ]
    if with_base:
        changes.append(
            (
                "%fixed = arith.ori %fixed0, %mode : i64",
                "%fixed = arith.ori %fixed0, %mode : i64\n      %baseA = arith.constant 1688849860263936 : i64\n"
                "      %fixedA = arith.ori %fixed, %baseA : i64",
            )
        )
        changes += [
            (f"%descA{k} = arith.ori %encA{k}, %fixed : i64", f"%descA{k} = arith.ori %encA{k}, %fixedA : i64")
            for k in range(4)
        ]
    for old, new in changes:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    path = tmp_path / "base_offset.mlir"
    path.write_text(text)
    return program, run_cli("run", str(path), "--emulate", "--offload-arch", ARCH)


@pytest.mark.parametrize("with_base", [True, False])
def test_wgmma_descriptor_base_offset(tmp_path, with_base):
    """The PTX ISA's matrix-descriptor base offset: a swizzled operand whose start is not on its pattern's
    1024-byte boundary reads right with base offset (start >> 7) & 7 = 3, and wrong without it."""
    tool = require_tools()
    program, done = base_offset_variant(tmp_path, with_base)
    assert done.returncode == 0, done.stderr
    assert filecheck(tool, program.path, ARCH, done.stdout).returncode == (0 if with_base else 1)


def test_a_bulk_copy_short_of_its_expected_bytes_is_reported(tmp_path):
    """bulk_multicast with each block expecting 512 bytes on the bulk copy's mbarrier, which gets 256: the
    wait can never complete, and the emulator says so instead of hanging."""
    require_tools()
    text = read_program(PROGRAMS / "bulk_multicast.mlir").body()
    old = "nvvm.mbarrier.arrive.expect_tx %bar_ptr, %size : !llvm.ptr<3>, i32"
    assert text.count(old) == 1
    text = text.replace(
        old,
        "%twice = arith.addi %size, %size : i32\n"
        "        nvvm.mbarrier.arrive.expect_tx %bar_ptr, %twice : !llvm.ptr<3>, i32",
    )
    path = tmp_path / "short.mlir"
    path.write_text(text)
    done = run_cli("run", str(path), "--emulate", "--offload-arch", ARCH)
    assert done.returncode == 1 and done.stdout == ""
    assert re.fullmatch(
        r"mlir-offload emulator: error: mbarrier misuse in kernel '\w+', block \(\d,0,0\), thread \(0,0,0\): the "
        r"mbarrier at shared offset \d+ is waited on for its phase of parity 0 by 64 thread\(s\), which no thread or "
        r"copy of the block can complete \(pending arrivals 0 of 1, tx-count 256\)\n",
        done.stderr,
    ), done.stderr
