#!/usr/bin/env python3
"""Benchmark of the device step (issue 3, item 8): 100 generated math kernels, targets sm_80, sm_90 and
gfx90a. In one run it times `mlir-offload device` and the upstream baseline (mlir-opt-22 with
gpu-module-to-binary{format=llvm}, libdevice through toolkit=, then mlir-translate-22; NVVM targets
only), and prints wall times, peak memory and the ratio on the shared targets (goal: <= 1.0).

Like with like: for format=llvm (offload) upstream's ModuleToObject::run translates, links libdevice
(LinkOnlyNeeded), then runs LLVM's O<n> pipeline of the nvvm.target (O=3 here) per target before it
returns bitcode; the baseline's O=0 row shows what the optimizer costs it. The headline ratio is on our
default flags (-O3) against the baseline at O=3; the -O0 row against O=0 compares the work without the
optimizer. Note: the LLVMs inside llvmlite and the MLIR Python bindings are builds with assertions
enabled, mlir-opt-22 is a release build: the same passes cost us more per module."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MATH = ("math.sqrt", "math.exp", "math.log", "math.sin", "math.tanh")


def generate(kernels: int) -> str:
    """MLIR text of `kernels` kernels, each chaining math functions over a memref element."""
    from mlir import ir
    from mlir.dialects import arith, gpu, math as math_dialect, memref  # noqa: F401 (registers dialects)

    with ir.Context(), ir.Location.unknown():
        module = ir.Module.create()
        module.operation.attributes["gpu.container_module"] = ir.UnitAttr.get()
        f32 = ir.F32Type.get()
        buffer = ir.MemRefType.get([ir.ShapedType.get_dynamic_size()], f32)
        with ir.InsertionPoint(module.body):
            gpu_module = gpu.GPUModuleOp("bench_kernels")
            block = gpu_module.bodyRegion.blocks.append()
        with ir.InsertionPoint(block):
            for k in range(kernels):
                function = gpu.GPUFuncOp(ir.TypeAttr.get(ir.FunctionType.get([buffer], [])),
                                         sym_name=f"kernel_{k}", kernel=True)
                body = function.body.blocks.append(buffer)
                with ir.InsertionPoint(body):
                    index = gpu.global_id(gpu.Dimension.x)
                    value = memref.load(body.arguments[0], [index])
                    for step in range(3):
                        name = MATH[(k + step) % len(MATH)].split(".")[1]
                        value = getattr(math_dialect, name)(value)
                    memref.store(value, body.arguments[0], [index])
                    gpu.return_([])
        return str(module)


def measure(command: list[str]) -> tuple[float, int, float]:
    """Wall seconds, peak RSS (KiB) and CPU seconds (user + system) of a child process and its children."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    stderr = process.stderr.read().decode(errors="replace")
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed: {' '.join(command)}\n{stderr}")
    return elapsed, usage.ru_maxrss, usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cuda", default=os.environ.get("CUDA_HOME", "/usr/local/cuda"))
    args = parser.parse_args()
    mlir_opt = shutil.which("mlir-opt-22") or "/usr/lib/llvm-22/bin/mlir-opt"
    mlir_translate = shutil.which("mlir-translate-22") or "/usr/lib/llvm-22/bin/mlir-translate"
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "bench.mlir"
        source.write_text(generate(args.kernels))
        ours = [sys.executable, "-m", "offload", "device", str(source), "-o", str(Path(tmp) / "out.offload")]
        lowered = Path(tmp) / "baseline.mlir"

        def baseline(opt_level: int) -> tuple[float, int, float]:
            pipeline = ("builtin.module("
                        f"nvvm-attach-target{{chip=sm_90 features=+ptx78 O={opt_level}}},"
                        f"nvvm-attach-target{{chip=sm_80 features=+ptx70 O={opt_level}}},"
                        "gpu.module(convert-scf-to-cf,convert-gpu-to-nvvm,canonicalize,cse,reconcile-unrealized-casts),"
                        f"gpu-module-to-binary{{format=llvm toolkit={args.cuda}}})")
            t1, m1, c1 = measure([mlir_opt, str(source), f"--pass-pipeline={pipeline}", "-o", str(lowered)])
            t2, m2, c2 = measure([mlir_translate, "--mlir-to-llvmir", str(lowered), "-o", str(Path(tmp) / "b.ll")])
            return t1 + t2, max(m1, m2), c1 + c2

        configurations = {
            "ours     -O3 sm_80,sm_90,gfx90a": lambda: measure(ours + ["--offload-arch", "sm_80,sm_90,gfx90a"]),
            "ours     -O3 sm_80,sm_90       ": lambda: measure(ours + ["--offload-arch", "sm_80,sm_90"]),
            "baseline O=3 sm_80,sm_90       ": lambda: baseline(3),
            "ours     -O0 sm_80,sm_90       ": lambda: measure(ours + ["--offload-arch", "sm_80,sm_90", "-O0"]),
            "baseline O=0 sm_80,sm_90       ": lambda: baseline(0),
        }
        # Runs interleave the configurations, so that load from elsewhere hits them alike; best of each.
        results: dict[str, list[tuple[float, int, float]]] = {name: [] for name in configurations}
        for _ in range(args.runs):
            for name, run in configurations.items():
                results[name].append(run())
    best = {name: (min(r[0] for r in runs), max(r[1] for r in runs), min(r[2] for r in runs))
            for name, runs in results.items()}
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"kernels: {args.kernels}, best of {args.runs} interleaved runs (wall time, CPU time, peak RSS, children "
          "included; our per-target LLVM stages run in parallel processes, so wall < CPU); "
          f"{os.cpu_count()} CPUs, load average {load}")
    for name, (seconds, peak, cpu) in best.items():
        tool = " (mlir-opt-22 + mlir-translate-22)" if name.startswith("baseline") else ""
        print(f"{name}: {seconds:.3f} s, CPU {cpu:.3f} s, peak {peak / 1024:.0f} MiB{tool}")
    headline = best["ours     -O3 sm_80,sm_90       "][0] / best["baseline O=3 sm_80,sm_90       "][0]
    unoptimized = best["ours     -O0 sm_80,sm_90       "][0] / best["baseline O=0 sm_80,sm_90       "][0]
    print(f"ratio ours/baseline on sm_80,sm_90, default flags (-O3 vs O=3, both optimize): {headline:.2f} "
          f"(goal <= 1.0: {'met' if headline <= 1.0 else 'missed'})")
    print(f"ratio ours/baseline on sm_80,sm_90, no optimizer (-O0 vs O=0): {unoptimized:.2f}")
    cpu = best["ours     -O3 sm_80,sm_90       "][2] / best["baseline O=3 sm_80,sm_90       "][2]
    print(f"ratio of CPU time on sm_80,sm_90, default flags: {cpu:.2f}")
    import llvmlite.binding as llvm

    print(f"llvmlite's LLVM {'.'.join(map(str, llvm.llvm_version_info))}: assertions "
          f"{llvm.llvm_assertions_state} (mlir-opt-22 is a release build)")


if __name__ == "__main__":
    main()
