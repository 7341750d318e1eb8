#!/usr/bin/env python3
"""Benchmark of the device step: 100 generated math kernels, targets sm_80 and sm_90.
In one run it times `mlir-offload device` and the upstream baseline (mlir-opt-22 with
gpu-module-to-binary{format=llvm}, libdevice through toolkit=, then mlir-translate-22), and prints median
wall and CPU times, peak memory and the ratios (goal: <= 1.0), then the per-kernel code comparison after
the target link (scripts/bench_code_quality.py).

Like with like: for format=llvm (offload) upstream's ModuleToObject::run translates, links libdevice
(LinkOnlyNeeded), then runs LLVM's O<n> pipeline of the nvvm.target (O=3 here) per target before it
returns bitcode; the baseline's O=0 row shows what the optimizer costs it. The headline ratio is on our
default flags (-O3) against the baseline at O=3; the -O0 row against O=0 compares the work without the
optimizer. Our LLVM stages run in LLVM's tools where installed (llvm-link-22 --only-needed for libdevice,
then opt-22, a release build: llvmlite's LLVM has assertions), so the parent never loads a second LLVM;
the llvmlite row is the in-process fallback (MLIR_OFFLOAD_OPT=llvmlite)."""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MATH = ("math.sqrt", "math.exp", "math.log", "math.sin", "math.tanh")


def generate(kernels: int) -> str:
    """MLIR text of `kernels` kernels, each chaining math functions over a memref element."""
    from mlir import ir
    from mlir.dialects import arith, gpu, memref  # noqa: F401 (registers dialects)
    from mlir.dialects import math as math_dialect

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
                function = gpu.GPUFuncOp(
                    ir.TypeAttr.get(ir.FunctionType.get([buffer], [])), sym_name=f"kernel_{k}", kernel=True
                )
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


def measure(command: list[str], environment: dict | None = None) -> tuple[float, int, float]:
    """Wall seconds, peak RSS (KiB) and CPU seconds (user + system) of a child process and its children."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=environment)
    _, status, usage = os.wait4(process.pid, 0)  # rusage of the child and the children it waited for
    elapsed = time.perf_counter() - start
    assert process.stderr is not None  # stderr=PIPE
    stderr = process.stderr.read().decode(errors="replace")
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed: {' '.join(command)}\n{stderr}")
    return elapsed, usage.ru_maxrss, usage.ru_utime + usage.ru_stime


def upstream_device(source: Path, out: Path, opt_level: int, cuda: str, arches=("sm_80", "sm_90")):
    """mlir-opt-22 (gpu-module-to-binary{format=llvm}) + mlir-translate-22: (wall, peak KiB, CPU)."""
    mlir_opt = shutil.which("mlir-opt-22") or "/usr/lib/llvm-22/bin/mlir-opt"
    mlir_translate = shutil.which("mlir-translate-22") or "/usr/lib/llvm-22/bin/mlir-translate"
    features = {"sm_80": "+ptx70", "sm_90": "+ptx78", "sm_70": "+ptx60", "sm_86": "+ptx71"}
    attach = ",".join(f"nvvm-attach-target{{chip={a} features={features[a]} O={opt_level}}}" for a in arches)
    pipeline = (
        f"builtin.module({attach},"
        "gpu.module(convert-scf-to-cf,convert-gpu-to-nvvm,canonicalize,cse,reconcile-unrealized-casts),"
        f"gpu-module-to-binary{{format=llvm toolkit={cuda}}})"
    )
    lowered = out.with_suffix(".lowered.mlir")
    t1, m1, c1 = measure([mlir_opt, str(source), f"--pass-pipeline={pipeline}", "-o", str(lowered)])
    t2, m2, c2 = measure([mlir_translate, "--mlir-to-llvmir", str(lowered), "-o", str(out.with_suffix(".ll"))])
    return t1 + t2, max(m1, m2), c1 + c2


def interleaved(configurations: dict, runs: int) -> dict[str, tuple[float, int, float]]:
    """Runs interleave the configurations, so that load from elsewhere hits them alike: the median wall
    and CPU time of each, and its highest peak memory."""
    results: dict[str, list[tuple[float, int, float]]] = {name: [] for name in configurations}
    for _ in range(runs):
        for name, run in configurations.items():
            results[name].append(run())
    return {
        name: (statistics.median(r[0] for r in rs), max(r[1] for r in rs), statistics.median(r[2] for r in rs))
        for name, rs in results.items()
    }


def print_table(results: dict, runs: int) -> None:
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"median of {runs} interleaved runs (wall, CPU user+system, peak RSS of the process tree's largest "
        f"process); {os.cpu_count()} CPUs, load average {load}"
    )
    for name, (seconds, peak, cpu) in results.items():
        print(f"  {name:<44} {seconds:7.3f} s  CPU {cpu:7.3f} s  peak {peak / 1024:5.0f} MiB")


def ratio_line(results: dict, ours: str, theirs: str, what: str) -> float:
    wall = results[ours][0] / results[theirs][0]
    cpu = results[ours][2] / results[theirs][2]
    memory = results[ours][1] / results[theirs][1]
    print(f"  ratio ours/upstream {what}: wall {wall:.2f}, CPU {cpu:.2f}, peak memory {memory:.2f}")
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cuda", default=os.environ.get("CUDA_HOME", "/usr/local/cuda"))
    parser.add_argument("--no-code-quality", action="store_true", help="skip the per-kernel code comparison")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "bench.mlir"
        source.write_text(generate(args.kernels))
        out = Path(tmp) / "out.offload"
        ours = [sys.executable, "-m", "offload", "device", str(source), "-o", str(out), "--offload-arch", "sm_80,sm_90"]
        cached = {**os.environ, "MLIR_OFFLOAD_CACHE_DIR": str(Path(tmp) / "cache")}
        measure(ours, cached)  # fills the cache for the cache-hit row
        in_process = {**os.environ, "MLIR_OFFLOAD_OPT": "llvmlite"}
        configurations = {
            "ours -O3 (llvm-link-22 + opt-22, pre-link)": lambda: measure(ours + ["--no-cache"]),
            "ours -O3 (llvmlite in-process)": lambda: measure(ours + ["--no-cache"], in_process),
            "upstream O=3": lambda: upstream_device(source, out, 3, args.cuda),
            "ours -O3, cache hit": lambda: measure(ours, cached),
            "ours -O0": lambda: measure(ours + ["--no-cache", "-O0"]),
            "upstream O=0": lambda: upstream_device(source, out, 0, args.cuda),
        }
        results = interleaved(configurations, args.runs)
        print(
            f"device step, {args.kernels} kernels, sm_80 + sm_90 "
            "(upstream: mlir-opt-22 gpu-module-to-binary{format=llvm} + mlir-translate-22)"
        )
        print_table(results, args.runs)
        headline = ratio_line(results, "ours -O3 (llvm-link-22 + opt-22, pre-link)", "upstream O=3", "-O3 vs O=3")
        ratio_line(results, "ours -O3 (llvmlite in-process)", "upstream O=3", "-O3 vs O=3, llvmlite in-process")
        ratio_line(results, "ours -O3, cache hit", "upstream O=3", "-O3 cache hit vs O=3")
        ratio_line(results, "ours -O0", "upstream O=0", "-O0 vs O=0")
        print(f"  goal (wall ratio at -O3 <= 1.0): {'met' if headline <= 1.0 else 'missed'}")
        import llvmlite.binding as llvm

        print(
            f"  llvmlite's LLVM {'.'.join(map(str, llvm.llvm_version_info))}: assertions "
            f"{llvm.llvm_assertions_state} (opt-22 and mlir-opt-22 are release builds)"
        )
        if not args.no_code_quality:
            from bench_code_quality import LIKE_UPSTREAM, compare

            print("\n".join(compare(source, "sm_80", args.cuda, LIKE_UPSTREAM.split())))


if __name__ == "__main__":
    main()
