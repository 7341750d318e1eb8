#!/usr/bin/env python3
"""How the device step grows, and the small-program start-up, against upstream in the same run.

1. `compile examples/saxpy.mlir` for sm_80,sm_90 against mlir-opt-22 --gpu-lower-to-nvvm-pipeline
   (cubin-format=llvm, opt-level=3; sm_90 attached first) + mlir-translate-22. Upstream's pipeline leaves
   saxpy's host gpu.alloc unlowered (an unrealized cast its translation refuses), so its time is
   mlir-opt-22 alone (a lower bound) when the translation fails; the line says which.
2. -O0 device step of a one-kernel program against mlir-opt-22 at O=0 (start-up dominated).
3. Our -O3 device step (no cache) with 10, 100, 1000 kernels on sm_80, and 100 kernels on 1, 2, 4 archs:
   CPU time, its growth per step, and whether it grew worse than linearly.
Medians of interleaved runs; run it nice'd on a shared machine."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_device import generate, interleaved, measure, print_table, ratio_line, upstream_device  # noqa: E402

ARCHS = ("sm_80", "sm_90", "sm_70", "sm_86")


def upstream_saxpy(work: Path, outcome: dict[str, bool]) -> tuple[float, int, float]:
    """mlir-opt-22 then mlir-translate-22 on saxpy; `outcome["translated"]` says whether the translation ran."""
    lowered, translated = work / "saxpy.upstream.mlir", work / "saxpy.upstream.ll"
    first = measure(
        [
            "mlir-opt-22",
            str(REPO / "examples" / "saxpy.mlir"),
            "--nvvm-attach-target=chip=sm_90 features=+ptx78 O=3",
            "--gpu-lower-to-nvvm-pipeline=cubin-chip=sm_80 cubin-features=+ptx70 opt-level=3 cubin-format=llvm",
            "-o",
            str(lowered),
        ]
    )
    done = subprocess.run(
        ["mlir-translate-22", "--mlir-to-llvmir", str(lowered), "-o", str(translated)], capture_output=True
    )
    if done.returncode != 0:
        outcome["translated"] = False
        return first
    outcome["translated"] = True
    second = measure(["mlir-translate-22", "--mlir-to-llvmir", str(lowered), "-o", str(translated)])
    return first[0] + second[0], max(first[1], second[1]), first[2] + second[2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cuda", default=os.environ.get("CUDA_HOME", "/usr/local/cuda"))
    args = parser.parse_args()
    offload = [sys.executable, "-m", "offload"]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        sources = {}
        for kernels in (1, 10, 100, 1000):
            sources[kernels] = work / f"k{kernels}.mlir"
            sources[kernels].write_text(generate(kernels))
        out = work / "out"
        upstream_saxpy_outcome = {"translated": True}

        def ours_device(kernels: int, archs: int, *flags: str):
            return lambda: measure(
                [
                    *offload,
                    "device",
                    str(sources[kernels]),
                    "--offload-arch",
                    ",".join(ARCHS[:archs]),
                    "--no-cache",
                    *flags,
                    "-o",
                    str(out),
                ]
            )

        small = {
            "ours compile saxpy sm_80,sm_90": lambda: measure(
                [
                    *offload,
                    "compile",
                    str(REPO / "examples" / "saxpy.mlir"),
                    "--offload-arch",
                    "sm_80,sm_90",
                    "--no-cache",
                    "-o",
                    str(work / "saxpy.offload.bc"),
                ]
            ),
            "upstream saxpy sm_80,sm_90": lambda: upstream_saxpy(work, upstream_saxpy_outcome),
            "ours device -O0, 1 kernel, sm_80": ours_device(1, 1, "-O0"),
            "upstream O=0, 1 kernel, sm_80": lambda: upstream_device(sources[1], out, 0, args.cuda, ("sm_80",)),
        }
        results = interleaved(small, args.runs)
        print_table(results, args.runs)
        ratio_line(
            results,
            "ours compile saxpy sm_80,sm_90",
            "upstream saxpy sm_80,sm_90",
            "saxpy compile"
            + (
                ""
                if upstream_saxpy_outcome["translated"]
                else " (upstream: mlir-opt-22 alone, its translation fails on saxpy's host)"
            ),
        )
        ratio_line(results, "ours device -O0, 1 kernel, sm_80", "upstream O=0, 1 kernel, sm_80", "-O0 one kernel")

        scaling = {f"ours -O3 {k:>4} kernels, 1 arch": ours_device(k, 1) for k in (10, 100, 1000)}
        scaling |= {f"ours -O3  100 kernels, {a} archs": ours_device(100, a) for a in (2, 4)}
        results = interleaved(scaling, args.runs)
        print_table(results, args.runs)
        cpu = {name: r[2] for name, r in results.items()}
        steps = [
            ("10 -> 100 kernels", "ours -O3   10 kernels, 1 arch", "ours -O3  100 kernels, 1 arch", 10),
            ("100 -> 1000 kernels", "ours -O3  100 kernels, 1 arch", "ours -O3 1000 kernels, 1 arch", 10),
            ("1 -> 2 archs", "ours -O3  100 kernels, 1 arch", "ours -O3  100 kernels, 2 archs", 2),
            ("2 -> 4 archs", "ours -O3  100 kernels, 2 archs", "ours -O3  100 kernels, 4 archs", 2),
        ]
        for label, before, after, factor in steps:
            growth = cpu[after] / cpu[before]
            verdict = "at most linear" if growth <= factor * 1.05 else "WORSE than linear"
            print(f"  CPU growth {label}: x{growth:.2f} for x{factor} the work ({verdict})")


if __name__ == "__main__":
    main()
