#!/usr/bin/env python3
"""Benchmark of the CPU emulator (docs/emulator.md): two programs compiled with --emulate, then run.

  saxpy 2^24   65536 blocks x 256 threads, no barrier: the plain-loop path   (goal on 2 cores: < 2 s)
  matmul 512   512x512 f32, 16x16 tiles through workgroup memory, 2 barriers per step: fibers  (< 5 s)

Times are of the executable alone (compile and link are done before), median of --repeat runs, wall and
CPU (user + system, all threads). The baseline, measured in the same run: the same computation written in
C (tiled the same way for the matmul) compiled by clang -O2 and run single-threaded; the ratio says what
emulating costs over plain host code. Then each program again under --emulate --sanitize (its default checks; its
blocks run one at a time, so its CPU time is the figure to compare): the ratios to plain emulation, wall
and CPU (goal: CPU ratio at most 5). Usage: python3 scripts/bench_emulator.py [--arch sm_80] [--repeat 3]"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SANITIZE_GOAL = 5.0  # --sanitize's CPU time over plain emulation's
PROGRAMS = {"saxpy 2^24": ("saxpy_large.mlir", 2.0), "matmul 512 (tiled)": ("matmul_tiled.mlir", 5.0)}

# The C baselines: the kernels' work as host loops (the tiled matmul with the same 16x16 tiles).
BASELINE_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int saxpy(void) {
    size_t n = (size_t)1 << 24;
    float *x = malloc(n * 4), *y = malloc(n * 4);
    for (size_t i = 0; i < n; ++i) { x[i] = (float)(i & 1023); y[i] = 1.0f; }
    for (size_t i = 0; i < n; ++i) y[i] = 2.0f * x[i] + y[i];
    size_t bad = 0;
    for (size_t i = 0; i < n; ++i) bad += y[i] != 2.0f * (float)(i & 1023) + 1.0f;
    printf("saxpy: %zu bad\n", bad);
    return bad != 0;
}
static int matmul(void) {
    enum { N = 512, T = 16 };
    float *a = malloc(N * N * 4), *b = malloc(N * N * 4), *c = calloc(N * N, 4);
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j) { a[i * N + j] = (float)((i + j) % 7); b[i * N + j] = (float)((i * 3 + j) % 5); }
    float ta[T][T], tb[T][T];
    for (int by = 0; by < N / T; ++by)
        for (int bx = 0; bx < N / T; ++bx) {
            float acc[T][T];
            memset(acc, 0, sizeof acc);
            for (int k0 = 0; k0 < N; k0 += T) {
                for (int ty = 0; ty < T; ++ty)
                    for (int tx = 0; tx < T; ++tx) {
                        ta[ty][tx] = a[(by * T + ty) * N + k0 + tx];
                        tb[ty][tx] = b[(k0 + ty) * N + bx * T + tx];
                    }
                for (int ty = 0; ty < T; ++ty)
                    for (int tx = 0; tx < T; ++tx)
                        for (int k = 0; k < T; ++k) acc[ty][tx] += ta[ty][k] * tb[k][tx];
            }
            for (int ty = 0; ty < T; ++ty)
                for (int tx = 0; tx < T; ++tx) c[(by * T + ty) * N + bx * T + tx] = acc[ty][tx];
        }
    printf("matmul: %f\n", c[N * N - 1]);
    return 0;
}
int main(int argc, char **argv) { return argc > 1 && strcmp(argv[1], "matmul") == 0 ? matmul() : saxpy(); }
"""


def cli(*args: str) -> None:
    done = subprocess.run([sys.executable, "-m", "offload", *args], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"mlir-offload {' '.join(args)} failed: {done.stderr.strip()}")


def timed(argv: list[str], repeat: int) -> tuple[float, float]:
    """Median wall and CPU seconds of `argv` (its output checked for 'ok' or a clean exit)."""
    walls, cpus = [], []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, text=True)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        if done.returncode != 0:
            sys.exit(f"{argv[0]} failed (exit {done.returncode}): {done.stdout.strip()} {done.stderr.strip()}")
    return statistics.median(walls), statistics.median(cpus)


def sanitized_executable(folder: str, source: str, mode: str, arch: str) -> str:
    """The program compiled and linked with --emulate --sanitize (every check but the opt-in leakcheck)."""
    bundle, executable = Path(folder, f"{mode}.sanitize.offload.bc"), Path(folder, f"{mode}.sanitize")
    cli(
        "compile",
        str(HERE / "bench_emulator" / source),
        "--offload-arch",
        arch,
        "--emulate",
        "--sanitize",
        "-o",
        str(bundle),
    )
    cli("link", str(bundle), "--emulate", "-o", str(executable))
    return str(executable)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", default="sm_80", help="offload arch to emulate (sm_80, gfx90a, ...)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-emulator-") as folder:
        baseline_source = Path(folder, "baseline.c")
        baseline_source.write_text(BASELINE_C)
        baseline = str(Path(folder, "baseline"))
        subprocess.run(["clang-22", "-O2", str(baseline_source), "-o", baseline], check=True)
        print(
            f"emulated {args.arch} on {os.cpu_count()} cores; median of {args.repeat} runs; baseline: the same "
            "work in C, clang -O2, one thread"
        )
        sanitized: dict[str, tuple[float, float, str]] = {}
        print(f"{'program':22} {'wall s':>8} {'cpu s':>8} {'goal s':>7} {'C wall s':>9} {'ratio':>7}")
        for (name, (source, goal)), mode in zip(PROGRAMS.items(), ("saxpy", "matmul"), strict=True):
            bundle, executable = Path(folder, f"{mode}.offload.bc"), Path(folder, mode)
            cli(
                "compile",
                str(HERE / "bench_emulator" / source),
                "--offload-arch",
                args.arch,
                "--emulate",
                "-o",
                str(bundle),
            )
            cli("link", str(bundle), "--emulate", "-o", str(executable))
            wall, cpu = timed([str(executable)], args.repeat)
            base_wall, _ = timed([baseline, mode], args.repeat)
            verdict = "ok" if wall < goal else "OVER"
            print(f"{name:22} {wall:8.2f} {cpu:8.2f} {goal:7.1f} {base_wall:9.2f} {wall / base_wall:7.1f}  {verdict}")
            sanitized[name] = (wall, cpu, sanitized_executable(folder, source, mode, args.arch))
        print(f"\n{'--sanitize':22} {'wall s':>8} {'cpu s':>8} {'x wall':>7} {'x cpu':>7}")
        for name, (wall, cpu, checked) in sanitized.items():
            checked_wall, checked_cpu = timed([checked], args.repeat)
            verdict = "ok" if checked_cpu <= SANITIZE_GOAL * cpu else "OVER"
            ratios = f"{checked_wall / wall:7.1f} {checked_cpu / cpu:7.1f}"
            print(f"{name:22} {checked_wall:8.2f} {checked_cpu:8.2f} {ratios}  {verdict}")


if __name__ == "__main__":
    main()
