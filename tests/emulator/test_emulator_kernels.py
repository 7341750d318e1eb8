"""Kernels computing under emulation (CUDA sm_80 and HIP gfx90a): the bundle's own device code, run on the
CPU, gives the numbers the hardware gives. Programs: tests/data/emulator/*.mlir; each expected value is
computed here, independently of the program."""

from __future__ import annotations

import math
import struct

import pytest

from conftest import REPO
from emulation import emulate

PROGRAMS = REPO / "tests" / "data" / "emulator"
ARCHS = ("sm_80", "gfx90a")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Each (program, arch) compiled, linked and run once for the module."""
    done = {}

    def run(program: str, arch: str):
        if (program, arch) not in done:
            folder = tmp_path_factory.mktemp(f"{program}-{arch}")
            done[program, arch] = emulate(PROGRAMS / f"{program}.mlir", arch, folder)
        return done[program, arch]

    return run


@pytest.mark.parametrize("arch", ARCHS)
def test_barrier_tree_reduction_and_global_atomics(runs, arch):
    done = runs("block_sum", arch)
    assert done.returncode == 0, done.stderr
    sums = [sum(range(256 * b, 256 * (b + 1))) for b in range(8)]
    expected = [f"block {b}: {s:.1f}" for b, s in enumerate(sums)] + [f"total: {sum(sums):.1f}"]
    assert done.stdout.splitlines() == expected


def ptx_shuffle(values, lane, mode, b, c, warp=32):
    """PTX shfl.sync for one lane (the ISA manual's pseudo-code): (value, valid)."""
    base, sub = lane - lane % warp, lane % warp
    clamp, segmask = c & 31, (c >> 8) & 31
    max_lane = (sub & segmask) | (clamp & ~segmask)
    min_lane = sub & segmask
    if mode == "up":
        j, valid = sub - b, sub - b >= max_lane
    elif mode == "down":
        j, valid = sub + b, sub + b <= max_lane
    elif mode == "bfly":
        j, valid = sub ^ b, (sub ^ b) <= max_lane
    else:
        j = min_lane | (b & ~segmask)
        valid = j <= max_lane
    return (values[base + j] if valid else values[lane]), valid


def read_lanes(stdout: str) -> list[dict]:
    rows = []
    for line in stdout.splitlines():
        head, *fields = line.split()
        rows.append({"t": int(head[1:-1]), **{k: int(v) for k, v in (f.split("=") for f in fields)}})
    return rows


def test_cuda_warp_shuffles_follow_ptx(runs):
    done = runs("warp_ops", "sm_80")
    assert done.returncode == 0, done.stderr
    rows = read_lanes(done.stdout)
    assert [r["t"] for r in rows] == list(range(64))
    values = [3 * t for t in range(64)]
    for r in rows:
        t = r["t"]
        # MLIR's NVVM lowering: clamp = width - 1 (0 for up), mask (1 << width) - 1
        assert r["xor"] == ptx_shuffle(values, t, "bfly", 1, 31)[0]
        assert r["up"] == ptx_shuffle(values, t, "up", 2, 0)[0]
        assert r["down"] == ptx_shuffle(values, t, "down", 3, 31)[0]
        assert r["idx"] == ptx_shuffle(values, t, "idx", 5, 31)[0]
        assert (r["w8"], bool(r["valid"])) == ptx_shuffle(values, t, "down", 3, 7)
        warp = range(t - t % 32, t - t % 32 + 32)
        assert r["sub"] == sum(warp)
        assert r["all"] == sum(range(64))


def test_hip_wavefront_shuffles(runs):
    done = runs("warp_ops", "gfx90a")
    assert done.returncode == 0, done.stderr
    rows = read_lanes(done.stdout)
    values = [3 * t for t in range(64)]
    for r in rows:
        t = r["t"]
        assert r["xor"] == values[t ^ 1]
        assert r["down"] == (values[t + 3] if t % 32 + 3 < 32 else values[t])  # width 32 on a 64-lane wavefront
        assert r["idx"] == values[5]  # one wavefront of 64 lanes
        assert r["sub"] == sum(range(t - t % 32, t - t % 32 + 32))  # xor offsets up to 16 stay in 32-lane halves
        assert r["all"] == sum(range(64))


@pytest.mark.parametrize("arch", ARCHS)
def test_grid_dynamic_shared_atomics_printf(runs, arch):
    done = runs("features", arch)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "grid: 0 bad of 576"  # every thread of the 3-D grid wrote its coordinates
    assert lines[1] == "reverse: 0 bad of 512"  # per-block dynamic workgroup memory
    assert lines[2:18] == [f"bin {b}: {sum(1 for i in range(8192) if i * 7 % 16 == b)}" for b in range(16)]
    hello = sorted(lines[18:])
    assert hello == sorted(f"hello from block {b} thread {t}: {t * 0.5:f}" for b in range(2) for t in range(3))


# Largest error allowed against Python's math (glibc, within 1 ulp), in ulps of the result: the device
# libraries' documented bounds (libdevice's and ocml's are alike) plus one.
F64_ULPS = 3
F32_ULPS = {"pow": 9, "tan": 5, "atan2": 4}
F32_DEFAULT_ULPS = 4
ARGUMENTS = [0.5, -1.25, 3.0, 10.0, -100.5, 1.0e-3]
SECOND = [2.0, 0.75, -1.5, 0.5, 3.0, -2.0]
FUNCTIONS = {
    "sin": lambda a, b: math.sin(a),
    "cos": lambda a, b: math.cos(a),
    "tan": lambda a, b: math.tan(a),
    "exp": lambda a, b: math.exp(a),
    "log": lambda a, b: math.log(abs(a)),
    "sqrt": lambda a, b: math.sqrt(abs(a)),
    "tanh": lambda a, b: math.tanh(a),
    "atan2": lambda a, b: math.atan2(a, b),
    "pow": lambda a, b: math.pow(abs(a), b),
    "erf": lambda a, b: math.erf(a),
    "rsqrt": lambda a, b: 1 / math.sqrt(abs(a)),
    "expm1": lambda a, b: math.expm1(a),
    "log1p": lambda a, b: math.log1p(abs(a)),
    "cbrt": lambda a, b: math.copysign(abs(a) ** (1 / 3), a),
    "floor": lambda a, b: math.floor(a),
    "fma": lambda a, b: a * b + a,
}


def f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


def ulps32(a: float, b: float) -> int:
    ia, ib = (struct.unpack("<i", struct.pack("<f", v))[0] for v in (a, b))
    ia, ib = (i if i >= 0 else -(i & 0x7FFFFFFF) for i in (ia, ib))
    return abs(ia - ib)


def ulps64(a: float, b: float) -> int:
    ia, ib = (struct.unpack("<q", struct.pack("<d", v))[0] for v in (a, b))
    ia, ib = (i if i >= 0 else -(i & 0x7FFFFFFFFFFFFFFF) for i in (ia, ib))
    return abs(ia - ib)


@pytest.mark.parametrize("arch", ARCHS)
def test_device_library_math(runs, arch):
    done = runs("device_math", arch)
    assert done.returncode == 0, done.stderr
    seen = set()
    for line in done.stdout.splitlines():
        name, index, got64, got32 = line.split()
        i = int(index)
        a, b = ARGUMENTS[i], SECOND[i]
        want64 = FUNCTIONS[name](a, b)
        cbrt_exact = name == "cbrt"  # ** (1/3) is itself a few ulp off: compare with a looser bound
        assert ulps64(float(got64), want64) <= (16 if cbrt_exact else F64_ULPS), (name, a, got64, want64)
        want32 = f32(FUNCTIONS[name](f32(a), f32(b)))
        assert ulps32(f32(float(got32)), want32) <= F32_ULPS.get(name, F32_DEFAULT_ULPS), (name, a, got32, want32)
        seen.add((name, i))
    assert len(seen) == len(FUNCTIONS) * len(ARGUMENTS)


def test_mma_sync_with_ldmatrix_and_cp_async(runs):
    """nvgpu's sm_80 path: cp.async staging, ldmatrix fragments, mma.sync m16n8k16 by the PTX layouts."""
    done = runs("mma_sync", "sm_80")
    assert done.returncode == 0, done.stderr
    a = [[(i + k) % 7 for k in range(16)] for i in range(16)]
    b_t = [[(n * 3 + k) % 5 for k in range(16)] for n in range(8)]
    assert done.stdout.splitlines() == [
        f"d[{i}][{j}] = {sum(a[i][k] * b_t[j][k] for k in range(16)):.1f}" for i in range(16) for j in range(8)
    ]


def test_wmma_subgroup_mma(runs):
    done = runs("wmma", "sm_80")
    assert done.returncode == 0, done.stderr
    a = [[(i + k) % 7 for k in range(16)] for i in range(16)]
    b = [[(3 * k + j) % 5 for j in range(16)] for k in range(16)]
    assert done.stdout.splitlines() == [
        f"d[{i}][{j}] = {sum(a[i][k] * b[k][j] for k in range(16)) + i - j + 0.5:.1f}"
        for i in range(16)
        for j in range(16)
    ]


def test_mma_sync_f64_fragments_from_global_memory(runs):
    done = runs("mma_f64", "sm_80")
    assert done.returncode == 0, done.stderr
    a = [[i + k / 4 for k in range(4)] for i in range(8)]
    b = [[k - j for j in range(8)] for k in range(4)]
    assert done.stdout.splitlines() == [
        f"d[{i}][{j}] = {sum(a[i][k] * b[k][j] for k in range(4)) + i * j / 4:.2f}" for i in range(8) for j in range(8)
    ]


def test_mma_sync_tf32_fragments_from_global_memory(runs):
    done = runs("mma_tf32", "sm_80")
    assert done.returncode == 0, done.stderr
    a = [[(i + 2 * k) % 7 for k in range(8)] for i in range(16)]
    b = [[(3 * k + j) % 5 for j in range(8)] for k in range(8)]
    assert done.stdout.splitlines() == [
        f"d[{i}][{j}] = {sum(a[i][k] * b[k][j] for k in range(8)) + i - j:.1f}" for i in range(16) for j in range(8)
    ]


def test_wmma_f64_subgroup_mma(runs):
    done = runs("wmma_f64", "sm_80")
    assert done.returncode == 0, done.stderr
    a = [[i * 0.5 + k for k in range(4)] for i in range(8)]
    b = [[j - 2 * k for j in range(8)] for k in range(4)]
    assert done.stdout.splitlines() == [
        f"d[{i}][{j}] = {sum(a[i][k] * b[k][j] for k in range(4)) + i + j * 0.5:.2f}"
        for i in range(8)
        for j in range(8)
    ]


def test_mma_sync_tf32_m16n8k4_fragments_from_global_memory(runs):
    done = runs("mma_tf32_k4", "sm_80")
    assert done.returncode == 0, done.stderr
    a = [[(i + 2 * k) % 7 for k in range(8)] for i in range(16)]
    b = [[(3 * k + j) % 5 for j in range(8)] for k in range(8)]
    assert done.stdout.splitlines() == [
        f"d[{i}][{j}] = {sum(a[i][k] * b[k][j] for k in range(4)) + i - j:.1f}" for i in range(16) for j in range(8)
    ]
