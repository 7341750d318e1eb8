#!/usr/bin/env python3
"""Benchmark of the device step (issue 3, item 8): 100 generated math kernels, targets sm_80, sm_90 and
gfx90a. In one run it times `mlir-offload device` and the upstream baseline (mlir-opt-22 with
gpu-module-to-binary{format=llvm}, libdevice through toolkit=, then mlir-translate-22; NVVM targets
only), and prints wall times, peak memory and the ratio on the shared targets (goal: <= 1.0)."""

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


def measure(command: list[str]) -> tuple[float, int]:
    """Wall seconds and peak RSS (KiB) of a child process."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    stderr = process.stderr.read().decode(errors="replace")
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed: {' '.join(command)}\n{stderr}")
    return elapsed, usage.ru_maxrss


def best_of(runs: int, command: list[str]) -> tuple[float, int]:
    results = [measure(command) for _ in range(runs)]
    return min(r[0] for r in results), max(r[1] for r in results)


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
        ours_all = best_of(args.runs, ours + ["--offload-arch", "sm_80,sm_90,gfx90a"])
        ours_nvvm = best_of(args.runs, ours + ["--offload-arch", "sm_80,sm_90"])
        lowered = Path(tmp) / "baseline.mlir"
        pipeline = ("builtin.module("
                    "nvvm-attach-target{chip=sm_90 features=+ptx78 O=3},"
                    "nvvm-attach-target{chip=sm_80 features=+ptx70 O=3},"
                    "gpu.module(convert-scf-to-cf,convert-gpu-to-nvvm,canonicalize,cse,reconcile-unrealized-casts),"
                    f"gpu-module-to-binary{{format=llvm toolkit={args.cuda}}})")

        def baseline() -> tuple[float, int]:
            t1, m1 = measure([mlir_opt, str(source), f"--pass-pipeline={pipeline}", "-o", str(lowered)])
            t2, m2 = measure([mlir_translate, "--mlir-to-llvmir", str(lowered), "-o", str(Path(tmp) / "b.ll")])
            return t1 + t2, max(m1, m2)

        runs = [baseline() for _ in range(args.runs)]
        base = (min(r[0] for r in runs), max(r[1] for r in runs))
    print(f"kernels: {args.kernels}, best of {args.runs} runs")
    print(f"ours     sm_80,sm_90,gfx90a : {ours_all[0]:.3f} s, peak {ours_all[1] / 1024:.0f} MiB")
    print(f"ours     sm_80,sm_90        : {ours_nvvm[0]:.3f} s, peak {ours_nvvm[1] / 1024:.0f} MiB")
    print(f"baseline sm_80,sm_90        : {base[0]:.3f} s, peak {base[1] / 1024:.0f} MiB (mlir-opt-22 + mlir-translate-22)")
    print(f"ratio ours/baseline on sm_80,sm_90: {ours_nvvm[0] / base[0]:.2f}")


if __name__ == "__main__":
    main()
