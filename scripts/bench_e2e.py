#!/usr/bin/env python3
"""Source to executable: mlir-offload against clang CUDA on the same program, timed in one run.

The program: N kernels of libdevice math (bench_device.generate's kernels: three of sqrt, exp, log, sin,
tanh chained over one float of a buffer) and a host main that allocates the buffer on the device,
launches each kernel once and frees it; written in MLIR (the MLIR bindings) and in CUDA (the same
kernels, extern "C", float* + size_t index as gpu.global_id's 64-bit index).

Ours: `mlir-offload compile --no-cache` (cold) or with a filled cache (warm), then `mlir-offload link`.
Clang CUDA: `clang++-22 -x cuda --offload-new-driver -fgpu-rdc -O3 -c`, then the same clang's link with
`--offload-new-driver -fgpu-rdc -lcudart` (clang CUDA has no cache: its warm row is its cold row).
Runs are interleaved (every configuration once per round) and each keeps its best of K, so that the
other load of a shared machine hits all alike; the ratio is ours / clang's, goal <= 0.8.

Then each stage's wall and CPU time: `compile -v`'s stage times, and the link's: each job of the clang
driver's `clang -###` run alone (CPU: getrusage of the job and all it ran), clang-linker-wrapper's
--wrapper-time-trace for its wall split (device LTO, ptxas, fatbinary, wrapping, host link), and ptxas run
alone on the PTX our device LTO makes. Last, the final SASS per kernel of both executables' device code
(bench_code_quality.ptxas_report on the PTX the linker wrapper kept with -save-temps): instructions,
registers, spill bytes.

`--make-j P,K` runs only a `make -j<CPUs>` of P programs of K kernels with both toolchains through the same
Makefile shape (the issue's scenario is 16,50)."""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

from bench_device import MATH  # noqa: E402

ARCHS = ("sm_80", "sm_90")
THREADS = 256
# Like with like: clang CUDA sets no __CUDA_PREC_SQRT, so its sqrtf is libdevice's approximate one (PTX
# sqrt.approx.f32); ours defaults to IEEE sqrt as nvcc does (32 more SASS instructions per kernel with a sqrt).
LIKE_CLANG_CUDA = "--no-prec-sqrt"
CUDA_MATH = {"sqrt": "sqrtf", "exp": "expf", "log": "logf", "sin": "sinf", "tanh": "tanhf"}


def kernel_math(k: int) -> list[str]:
    """The three math functions kernel k chains (bench_device.generate's choice)."""
    return [MATH[(k + step) % len(MATH)].split(".")[1] for step in range(3)]


def generate_mlir(kernels: int, first: int = 0) -> str:
    """The MLIR program: bench_device.generate's kernels (kernel_<first> on) and a func.func @main launching each."""
    from mlir import ir
    from mlir.dialects import arith, func, gpu, memref
    from mlir.dialects import math as math_dialect

    with ir.Context(), ir.Location.unknown():
        module = ir.Module.create()
        module.operation.attributes["gpu.container_module"] = ir.UnitAttr.get()
        f32, index, i32 = ir.F32Type.get(), ir.IndexType.get(), ir.IntegerType.get_signless(32)
        buffer = ir.MemRefType.get([ir.ShapedType.get_dynamic_size()], f32)
        with ir.InsertionPoint(module.body):
            gpu_module = gpu.GPUModuleOp("bench_kernels")
            block = gpu_module.bodyRegion.blocks.append()
            main = func.FuncOp("main", ir.FunctionType.get([], [i32]))
        with ir.InsertionPoint(block):
            for k in range(first, first + kernels):
                function = gpu.GPUFuncOp(
                    ir.TypeAttr.get(ir.FunctionType.get([buffer], [])), sym_name=f"kernel_{k}", kernel=True
                )
                body = function.body.blocks.append(buffer)
                with ir.InsertionPoint(body):
                    position = gpu.global_id(gpu.Dimension.x)
                    value = memref.load(body.arguments[0], [position])
                    for name in kernel_math(k):
                        value = getattr(math_dialect, name)(value)
                    memref.store(value, body.arguments[0], [position])
                    gpu.return_([])
        with ir.InsertionPoint(main.add_entry_block()):
            one = arith.constant(index, 1)
            threads = arith.constant(index, THREADS)
            data = gpu.alloc(buffer, None, [], [threads], [])
            for k in range(first, first + kernels):
                gpu.LaunchFuncOp(["bench_kernels", f"kernel_{k}"], (one, one, one), (threads, one, one), [data])
            gpu.dealloc(None, [], data)
            func.return_([arith.constant(i32, 0)])
        return str(module)


def generate_cuda(kernels: int, first: int = 0) -> str:
    """The same program in CUDA (a benchmark input: C++ source text, not IR)."""
    lines = ["#include <cuda_runtime.h>", ""]
    for k in range(first, first + kernels):
        lines.append(f'extern "C" __global__ void kernel_{k}(float *data) {{')
        lines.append("  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;")
        lines.append("  float v = data[i];")
        lines += [f"  v = {CUDA_MATH[name]}(v);" for name in kernel_math(k)]
        lines += ["  data[i] = v;", "}", ""]
    lines += ["int main() {", "  float *data;", f"  cudaMalloc(&data, {THREADS} * sizeof(float));"]
    lines += [f"  kernel_{k}<<<1, {THREADS}>>>(data);" for k in range(first, first + kernels)]
    lines += ["  cudaFree(data);", "  return 0;", "}", ""]
    return "\n".join(lines)


CPU_TIMES: list[float] = []  # the CPU seconds (user + system, the command and all it waited for) of each timed()


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(command: list[str], environment: dict | None = None, cwd: Path | None = None) -> tuple[float, str]:
    """Wall seconds and standard error of `command`; its CPU seconds go to CPU_TIMES."""
    cpu = children_cpu()
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=environment, cwd=cwd)
    elapsed = time.perf_counter() - start
    CPU_TIMES.append(children_cpu() - cpu)
    if done.returncode != 0:
        sys.exit(f"failed: {shlex.join(command)}\n{done.stderr}")
    return elapsed, done.stderr


class Build:
    """One program, one arch set: the commands of both builds, in a folder of their own."""

    def __init__(
        self,
        work: Path,
        kernels: int,
        archs: tuple[str, ...],
        cuda: str,
        clang: str,
        our_flags: list[str],
        our_link_flags: tuple[str, ...] = (),
    ):
        self.work, self.kernels, self.archs, self.cuda, self.clang = work, kernels, archs, cuda, clang
        self.our_flags, self.our_link_flags = our_flags, list(our_link_flags)
        work.mkdir(parents=True, exist_ok=True)
        self.mlir = work / "bench.mlir"
        self.cu = work / "bench.cu"
        # clang-22's CUDA wrapper headers include curand_mtgp32_kernel.h, which a toolkit without curand
        # lacks (docs/performance.md): an empty one on -I stands in.
        self.include = work / "include"
        if not self.mlir.exists():
            self.mlir.write_text(generate_mlir(kernels))
            self.cu.write_text(generate_cuda(kernels))
            self.include.mkdir()
            (self.include / "curand_mtgp32_kernel.h").write_text("")
        # Compiled Python as an installed package has it (pip writes the .pyc files), kept in the work folder.
        self.environment = {
            **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
            "PYTHONPATH": str(REPO),
            "PYTHONPYCACHEPREFIX": str(work / "pycache"),
            "MLIR_OFFLOAD_CACHE_DIR": str(work / "cache"),
        }
        self.offload = [sys.executable, "-m", "offload"]

    @property
    def native(self) -> bool:
        """Whether our bundle holds cubins (compile --device-image=cubin: the device link ran at compile)."""
        return "--device-image=cubin" in self.our_flags

    def ours_compile(self, cache: bool, *extra: str, output: Path | None = None) -> list[str]:
        return [
            *self.offload,
            "compile",
            str(self.mlir),
            "--offload-arch",
            ",".join(self.archs),
            *([] if cache else ["--no-cache"]),
            *self.our_flags,
            *extra,
            "-o",
            str(output or self.work / "bench.offload.bc"),
        ]

    def ours_link(self, *extra: str, bundle: Path | None = None) -> list[str]:
        return [
            *self.offload,
            "link",
            str(bundle or self.work / "bench.offload.bc"),
            "--cuda-path",
            self.cuda,
            *self.our_link_flags,
            *extra,
            "-o",
            str(self.work / "ours"),
        ]

    def clang_compile(self, *extra: str) -> list[str]:
        return [
            self.clang,
            "-x",
            "cuda",
            "--offload-new-driver",
            "-fgpu-rdc",
            "-O3",
            f"--cuda-path={self.cuda}",
            *[f"--offload-arch={a}" for a in self.archs],
            "-Wno-unknown-cuda-version",
            f"-I{self.include}",
            *extra,
            "-c",
            str(self.cu),
            "-o",
            str(self.work / "bench.cu.o"),
        ]

    def clang_link(self, *extra: str) -> list[str]:
        return [
            self.clang,
            "--offload-new-driver",
            "-fgpu-rdc",
            f"--cuda-path={self.cuda}",
            str(self.work / "bench.cu.o"),
            f"-L{self.cuda}/lib64",
            "-lcudart",
            "-Wno-unknown-cuda-version",
            *extra,
            "-o",
            str(self.work / "theirs"),
        ]

    def ours(self, cache: bool) -> tuple[float, float]:
        """Wall and CPU seconds of compile + link."""
        first, _ = timed(self.ours_compile(cache), self.environment)
        second, _ = timed(self.ours_link(), self.environment)
        return first + second, sum(CPU_TIMES[-2:])

    def theirs(self) -> tuple[float, float]:
        first, _ = timed(self.clang_compile())
        second, _ = timed(self.clang_link())
        return first + second, sum(CPU_TIMES[-2:])


def device_floor(build: Build, runs: int) -> float:
    """CPU seconds (best of `runs`) of the device work the same SASS needs: per arch, the target's device
    link run alone on our device bitcode (`opt -passes=lto<O2>`, `llc`, `ptxas -O3`, as
    offload.device.device_lto runs them). clang CUDA's compile does the same three steps (its O3, its code
    generation, ptxas on the same PTX), so no build whose kernels end as the same SASS spends less: this
    over clang CUDA's CPU is the lowest ratio a build of this program can reach without skipping device
    work that the SASS comes from."""
    from offload.device.device_lto import find_device_lto
    from offload.device.native import run_ptxas
    from offload.formats.profiles import load_profile

    folder = build.work / "floor"
    prec = [flag for flag in build.our_flags if "prec" in flag or "fast-math" in flag or "ftz" in flag]
    command = [*build.offload, "device", str(build.mlir), "--offload-arch", ",".join(build.archs), *prec]
    timed([*command, "--no-cache", "--emit=bc", "-o", str(folder)], build.environment)
    profile, totals = load_profile(), []
    for _ in range(runs):
        total = 0.0
        for arch in build.archs:
            lto = find_device_lto(profile, arch, build.cuda)
            if lto is None:
                sys.exit(f"no device link for {arch} on this machine (opt-22, llc-22, clang-22 and the toolkit)")
            bitcode = next(path for path in folder.iterdir() if arch in path.name).read_bytes()
            start = children_cpu()
            ptx = lto.ptx(bitcode, arch, 3)
            run_ptxas(ptx, arch, str(Path(build.cuda) / "bin" / "ptxas"), 3, lto.ptxas_flags)
            total += children_cpu() - start
        totals.append(total)
    return min(totals)


def best_of_interleaved(configurations: dict, runs: int) -> tuple[dict, dict]:
    """The least wall and the least CPU seconds of each configuration over `runs` interleaved rounds."""
    best = {name: float("inf") for name in configurations}
    best_cpu = {name: float("inf") for name in configurations}
    for _ in range(runs):
        for name, run in configurations.items():
            wall, cpu = run()
            best[name] = min(best[name], wall)
            best_cpu[name] = min(best_cpu[name], cpu)
    return best, best_cpu


def compile_stages(build: Build) -> dict[str, tuple[float, float]]:
    """`compile -v`'s stage times (wall and CPU seconds) of a cold compile, plus the rest of the process's."""
    elapsed, log = timed(build.ours_compile(False, "-v"), build.environment)
    cpu_total = CPU_TIMES[-1]
    stages: dict[str, tuple[float, float]] = {}
    for line in log.splitlines():  # "mlir-offload: stage NAME: 12.3 ms (CPU 10.1 ms)"
        if line.startswith(STAGE_LINE) and line.endswith(" ms)"):
            name, _, times = line[len(STAGE_LINE) :].rpartition(": ")
            words = times.replace("(", "").split()  # ["12.3", "ms", "CPU", "10.1", "ms)"]
            wall, cpu = stages.get(name, (0.0, 0.0))
            stages[name] = (wall + float(words[0]) / 1000, cpu + float(words[3]) / 1000)
    # codegen (the device link at compile, with --device-image=cubin) runs inside the device stage.
    nested = {f"  of which {name}": stages.pop(name) for name in NESTED_STAGES if name in stages}
    stages["(start-up, imports, reading, writing)"] = (
        elapsed - sum(w for w, _ in stages.values()),
        cpu_total - sum(c for _, c in stages.values()),
    )
    return {**stages, **nested}


STAGE_LINE = "mlir-offload: stage "
NESTED_STAGES = ("codegen",)  # compile -v stages timed inside another


def our_link_command(build: Build, *extra: str) -> tuple[list[str], dict]:
    """The clang command `mlir-offload link` runs, with the environment it sets (`link --dry-run`)."""
    _, _ = timed(build.ours_link("--dry-run", *extra), build.environment)  # checks the link plans
    printed = subprocess.run(
        build.ours_link("--dry-run", *extra), capture_output=True, text=True, env=build.environment
    )
    words = shlex.split(printed.stdout.strip().splitlines()[-1])
    environment = dict(os.environ)
    while words and "=" in words[0] and not words[0].startswith("-"):
        name, _, value = words.pop(0).partition("=")
        environment[name] = value.replace("$PATH", os.environ.get("PATH", ""))
    return words, environment


def driver_stages(
    build: Build, command: list[str], environment: dict | None = None
) -> dict[str, tuple[float, float | None]]:
    """A clang driver command's stages, (wall, CPU) seconds: each job of `clang -###` run and timed alone
    (CPU: getrusage of the job and all it ran); the linker wrapper's wall split from its --wrapper-time-trace
    (its spans have no CPU figure: the wrapper's CPU is one row, and ptxas_alone splits ptxas off)."""
    done = subprocess.run([*command, "-###"], capture_output=True, text=True, env=environment)
    jobs = [shlex.split(line) for line in done.stderr.splitlines() if line.startswith(' "')]
    stages: dict[str, tuple[float, float | None]] = {}
    trace = build.work / "wrapper-trace.json"
    for job in jobs:
        tool = Path(job[0]).name
        if tool == "clang-linker-wrapper":
            elapsed, _ = timed([job[0], f"--wrapper-time-trace={trace}", *job[1:]], environment, build.work)
            stages["linker wrapper: all of it"] = (elapsed, CPU_TIMES[-1])
            spans = wrapper_spans(trace)
            for name, seconds in spans.items():
                stages[f"  {name}"] = (seconds, None)
            stages["  (the rest)"] = (elapsed - sum(spans.values()), None)
            continue
        if "-cc1" in job:
            triple = job[job.index("-triple") + 1]
            source = "bundle's host bitcode" if "ir" in job else Path(job[-1]).name
            label = f"clang -cc1 {triple} ({source})"
        else:
            label = tool
        elapsed, _ = timed(job, environment, build.work)
        wall, cpu = stages.get(label, (0.0, 0.0))
        stages[label] = (wall + elapsed, (cpu or 0.0) + CPU_TIMES[-1])
    return stages


def ptxas_alone(build: Build) -> dict[str, tuple[float, float | None]]:
    """What ptxas alone costs in our link: ptxas -O3 (one thread) run and timed by itself on the PTX of each
    arch that our link's device LTO hands it (kept with -save-temps, which runs LTO unpartitioned)."""
    if build.native:  # ptxas ran in the compile (its codegen stage), not in the link
        return {}
    folder = build.work / "ptxas-alone"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    command, environment = our_link_command(build, "-save-temps")
    timed([*command[:-2], "-o", str(folder / "app")], environment, folder)
    ptxas = str(Path(build.cuda) / "bin" / "ptxas")
    stages: dict[str, tuple[float, float | None]] = {}
    for arch in build.archs:
        ptx = folder / f"app.nvptx64.{arch}.s"
        elapsed, _ = timed([ptxas, f"-arch={arch}", "-O3", "-c", str(ptx), "-o", str(folder / f"{arch}.cubin")])
        stages[f"  of which ptxas {arch} (alone, one thread)"] = (elapsed, CPU_TIMES[-1])
    return stages


# clang-linker-wrapper's time-trace spans of its main thread that do not overlap (its device links run on
# worker threads with --wrapper-jobs, whose spans the trace leaves out: "Handle all device input" holds them).
WRAPPER_SPANS = {
    "Handle all device input": "device code (extract, LTO, llc, ptxas, fatbinary)",
    "Wrap bundled images": "wrap the images (registration code)",
    "Execute host linker": "host link (ld)",
}


def wrapper_spans(path: Path) -> dict[str, float]:
    """The linker wrapper's stages (seconds) from its time trace."""
    events = [e for e in json.loads(path.read_text())["traceEvents"] if e.get("ph") == "X"]
    spans: dict[str, float] = {}
    for event in events:
        if event["name"] in WRAPPER_SPANS:
            name = WRAPPER_SPANS[event["name"]]
            spans[name] = spans.get(name, 0.0) + event["dur"] / 1e6
    return spans


def sass_comparison(build: Build) -> list[str]:
    """Per kernel and arch, the final SASS of both builds: the PTX each linker wrapper (ours: device LTO)
    or clang's compile (clang CUDA: no device LTO without -foffload-lto) handed to ptxas, kept with
    -save-temps, through bench_code_quality.ptxas_report."""
    from bench_code_quality import ptxas_report

    ptxas = str(Path(build.cuda) / "bin" / "ptxas")
    ours_folder, theirs_folder = build.work / "sass-ours", build.work / "sass-clang"
    for folder in (ours_folder, theirs_folder):
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
    if build.native:  # the PTX our compile's device link assembled (-save-temps keeps it), linked as timed
        bundle = ours_folder / "bench.offload.bc"
        timed(build.ours_compile(False, "-save-temps", output=bundle), build.environment, ours_folder)
        timed([*build.ours_link(bundle=bundle)[:-2], "-o", str(ours_folder / "app")], build.environment)
    else:
        command, environment = our_link_command(build, "-save-temps")
        timed([*command[:-2], "-o", str(ours_folder / "app")], environment, ours_folder)
    timed([*build.clang_compile("-save-temps")[:-2], "-o", str(theirs_folder / "bench.o")], None, theirs_folder)
    lines = []
    worse_total = 0
    for arch in build.archs:
        our_ptx = f"bench.2-native.{arch}.ptx" if build.native else f"app.nvptx64.{arch}.s"
        ours = ptxas_report(ours_folder / our_ptx, arch, ptxas)
        theirs = ptxas_report(next(theirs_folder.glob(f"*-cuda-nvptx64-nvidia-cuda-{arch}.s")), arch, ptxas)
        worse = [
            k
            for k in theirs
            if ours[k].instructions > theirs[k].instructions
            or ours[k].registers > theirs[k].registers
            or ours[k].spill_bytes > theirs[k].spill_bytes
        ]
        better = [
            k
            for k in theirs
            if k not in worse
            and (ours[k].instructions, ours[k].registers, ours[k].spill_bytes)
            != (theirs[k].instructions, theirs[k].registers, theirs[k].spill_bytes)
        ]
        worse_total += len(worse)
        total = [
            sum(getattr(r[k], f) for k in theirs)
            for r in (ours, theirs)
            for f in ("instructions", "registers", "spill_bytes")
        ]
        lines.append(
            f"  {arch}: {len(theirs)} kernels; ours {total[0]} instructions, {total[1]} registers, "
            f"{total[2]} spill bytes; clang CUDA {total[3]}, {total[4]}, {total[5]}; "
            f"worse in any: {len(worse)}, better: {len(better)}, "
            f"same: {len(theirs) - len(worse) - len(better)}"
        )
        for kernel in worse[:10]:
            o, t = ours[kernel], theirs[kernel]
            lines.append(
                f"    worse {kernel}: {o.instructions}/{o.registers}/{o.spill_bytes} against "
                f"{t.instructions}/{t.registers}/{t.spill_bytes} (instructions/registers/spill bytes)"
            )
    lines.append(f"  SASS no worse per kernel: {'yes' if worse_total == 0 else 'NO'}")
    # -save-temps turns link's parallel device link off (partitions would share one PTX name): the timed
    # executable must hold the same kernel code as the one compared here.
    timed_code, compared_code = kernel_code(build.work / "ours"), kernel_code(ours_folder / "app")
    same = bool(compared_code) and timed_code == compared_code
    lines.append(
        f"  the timed executable's kernel code is the compared one's ({len(compared_code)} kernels x archs): "
        f"{'yes' if same else 'NO'}"
    )
    return lines


def kernel_code(executable: Path) -> dict[str, bytes]:
    """Each kernel's SASS in an executable: its cubin's .text.<kernel> bytes, per arch."""
    from offload.formats.elf import read_elf
    from offload.toolchain.executable import read_executable

    code = {}
    for objects in read_executable(str(executable)).device_sections.values():
        for image in objects:
            if image.kind == "elf" and not image.compressed:
                elf = read_elf(image.data, str(executable))
                texts = [s for s in elf.sections if s.name.startswith(".text.")]
                code.update({f"{image.arch} {s.name}": elf.section_data(s) for s in texts})
    return code


MAKEFILE = """# {title}: every program from source to executable, one rule per step, as a project's Makefile has it.
MAKEFLAGS += -r
PROGRAMS := {programs}
all: $(PROGRAMS)
%{object}: %{source}
\t{compile}
%: %{object}
\t{link}
.PHONY: all
"""


def make_scenario(work: Path, programs: int, kernels: int, jobs: int, runs: int, args) -> list[str]:
    """`make -j<jobs>` of `programs` programs of `kernels` kernels each (program i: kernels i*kernels on), sm_80,
    with both toolchains through the same Makefile shape (compile rule, link rule; ours cold: --no-cache), runs
    interleaved, each keeping its best wall and CPU (getrusage of make and all it ran)."""
    names = [f"p{i}" for i in range(programs)]
    build = Build(
        work / "make-common",
        1,
        ARCHS[:1],
        args.cuda,
        args.clang,
        args.our_flags.split(),
        tuple(args.our_link_flags.split()),
    )
    offload = shlex.join(build.offload)
    folders = {"ours": work / "make-ours", "clang CUDA": work / "make-clang"}
    for folder in folders.values():
        folder.mkdir(parents=True, exist_ok=True)
    for i, name in enumerate(names):
        (folders["ours"] / f"{name}.mlir").write_text(generate_mlir(kernels, i * kernels))
        (folders["clang CUDA"] / f"{name}.cu").write_text(generate_cuda(kernels, i * kernels))
    (folders["ours"] / "Makefile").write_text(
        MAKEFILE.format(
            title="mlir-offload",
            programs=" ".join(names),
            object=".offload.bc",
            source=".mlir",
            compile=f"{offload} compile $< --offload-arch {ARCHS[0]} --no-cache {shlex.join(build.our_flags)} -o $@",
            link=f"{offload} link $< --cuda-path {shlex.quote(args.cuda)} {shlex.join(build.our_link_flags)} -o $@",
        )
    )
    (folders["clang CUDA"] / "Makefile").write_text(
        MAKEFILE.format(
            title="clang CUDA",
            programs=" ".join(names),
            object=".o",
            source=".cu",
            compile=shlex.join(build.clang_compile()[:-4]) + " -c $< -o $@",
            link=shlex.join(build.clang_link()[:-2]).replace(str(build.work / "bench.cu.o"), "$<") + " -o $@",
        )
    )
    build.ours(cache=False)  # writes the compiled Python (pycache), as an installed package has it, before timing
    best = {name: (float("inf"), float("inf")) for name in folders}
    for _ in range(runs):
        for name, folder in folders.items():
            for made in folder.iterdir():
                if made.suffix in (".bc", ".o") or made.name in names:
                    made.unlink()
            wall, _ = timed(["make", f"-j{jobs}", "-s"], build.environment, folder)
            best[name] = (min(best[name][0], wall), min(best[name][1], CPU_TIMES[-1]))
    (ours_wall, ours_cpu), (theirs_wall, theirs_cpu) = best["ours"], best["clang CUDA"]
    return [
        f"make -j{jobs}: {programs} programs of {kernels} kernels, {ARCHS[0]}, best of {runs} interleaved rounds:",
        "| build | wall | CPU |",
        "|---|---|---|",
        f"| mlir-offload (cold) | {ours_wall:.2f} s | {ours_cpu:.2f} s |",
        f"| clang CUDA | {theirs_wall:.2f} s | {theirs_cpu:.2f} s |",
        f"| ratio | {ours_wall / theirs_wall:.2f} | {ours_cpu / theirs_cpu:.2f} |",
        f"goal (wall ratio <= 0.6 where make saturates the machine): "
        f"{'met' if ours_wall <= 0.6 * theirs_wall else 'missed'}",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 and 50 kernels, sm_80 only, best of 2")
    parser.add_argument("--sizes", default="1,200,1000")
    parser.add_argument("--archs", default="1,2", help="arch counts (sm_80, then sm_90)")
    parser.add_argument("--runs", type=int, default=3, help="best of this many interleaved rounds")
    parser.add_argument("--cuda", default=os.environ.get("CUDA_HOME", "/usr/local/cuda"))
    parser.add_argument("--clang", default=shutil.which("clang++-22") or "clang++")
    parser.add_argument(
        "--our-flags",
        default=LIKE_CLANG_CUDA,
        help=f"our compile flags (default {LIKE_CLANG_CUDA!r}: clang CUDA's approximate sqrtf)",
    )
    parser.add_argument(
        "--our-link-flags",
        default="",
        help="our link flags (e.g. --serial-device-link: the device link on one thread, the least CPU)",
    )
    parser.add_argument(
        "--also-our-flags",
        default="",
        help="also build ours with these compile flags in the same rounds, as rows marked (also) "
        "(e.g. '--no-prec-sqrt --device-image=cubin')",
    )
    parser.add_argument("--no-stages", action="store_true")
    parser.add_argument("--no-sass", action="store_true")
    parser.add_argument("--no-floor", action="store_true", help="skip the same-SASS device work floor")
    parser.add_argument(
        "--make-j",
        default="",
        metavar="PROGRAMS,KERNELS",
        help="only the make -j scenario: PROGRAMS programs of KERNELS kernels (the issue's is 16,50), -j = CPUs",
    )
    args = parser.parse_args()
    if args.make_j:
        programs, kernels = (int(n) for n in args.make_j.split(","))
        jobs = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        with tempfile.TemporaryDirectory() as tmp:
            lines = make_scenario(Path(tmp), programs, kernels, jobs, args.runs, args)
        load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
        print(f"$ scripts/bench_e2e.py {shlex.join(sys.argv[1:])}   ({os.cpu_count()} CPUs, load {load})")
        print("\n".join(lines))
        return
    sizes = [1, 50] if args.quick else [int(s) for s in args.sizes.split(",")]
    arch_counts = [1] if args.quick else [int(a) for a in args.archs.split(",")]
    runs = 2 if args.quick else args.runs
    with tempfile.TemporaryDirectory() as tmp:
        builds = {
            (n, a): Build(
                Path(tmp) / f"k{n}-a{a}",
                n,
                ARCHS[:a],
                args.cuda,
                args.clang,
                args.our_flags.split(),
                tuple(args.our_link_flags.split()),
            )
            for n in sizes
            for a in arch_counts
        }
        # --also-our-flags: the same programs built by us with other compile flags, in the same rounds.
        also = {
            (n, a): Build(
                Path(tmp) / f"k{n}-a{a}-also",
                n,
                ARCHS[:a],
                args.cuda,
                args.clang,
                args.also_our_flags.split(),
                tuple(args.our_link_flags.split()),
            )
            for n, a in builds
            if args.also_our_flags
        }
        configurations = {}
        for (n, a), build in builds.items():
            configurations[(n, a, "ours cold")] = lambda b=build: b.ours(cache=False)
            configurations[(n, a, "clang CUDA")] = lambda b=build: b.theirs()
            if (n, a) in also:
                configurations[(n, a, "also cold")] = lambda b=also[(n, a)]: b.ours(cache=False)
        for build in [*builds.values(), *also.values()]:  # fills each cache for the warm rows
            build.ours(cache=True)
        for (n, a), build in builds.items():
            configurations[(n, a, "ours warm")] = lambda b=build: b.ours(cache=True)
            if (n, a) in also:
                configurations[(n, a, "also warm")] = lambda b=also[(n, a)]: b.ours(cache=True)
        best, best_cpu = best_of_interleaved(configurations, runs)
        load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
        print(f"$ scripts/bench_e2e.py {shlex.join(sys.argv[1:])}".rstrip())
        print(
            f"source to executable, best of {runs} interleaved rounds; {os.cpu_count()} CPUs, load {load}; "
            f"our compile flags: {args.our_flags or '(none)'}; our link flags: {args.our_link_flags or '(none)'}"
            + (f"; rows marked (also): our compile flags {args.also_our_flags}" if also else "")
        )

        def table(times: dict) -> float:
            """Prints a table of `times`; returns the worst cold ratio of the main rows."""
            print("| program | mlir-offload cold | mlir-offload warm | clang CUDA | ratio cold | ratio warm |")
            print("|---|---|---|---|---|---|")
            for (n, a), build in builds.items():
                theirs = times[(n, a, "clang CUDA")]
                for mode, mark in (("ours", ""), ("also", " (also)")):
                    if (n, a, f"{mode} cold") not in times:
                        continue
                    cold, warm = times[(n, a, f"{mode} cold")], times[(n, a, f"{mode} warm")]
                    print(
                        f"| {n} kernel{'s' if n > 1 else ''}, {' + '.join(build.archs)}{mark} | {cold:.2f} s | "
                        f"{warm:.2f} s | {theirs:.2f} s | {cold / theirs:.2f} | {warm / theirs:.2f} |"
                    )
            return max(times[(n, a, "ours cold")] / times[(n, a, "clang CUDA")] for n, a in builds)

        worst = table(best)
        print(f"goal (every ratio <= 0.8): {'met' if worst <= 0.8 else 'missed'} (worst cold ratio {worst:.2f})")
        print("\nCPU time (user + system of every process), same runs:")
        worst_cpu = table(best_cpu)
        print(f"CPU goal (every cold ratio <= 0.6): {'met' if worst_cpu <= 0.6 else 'missed'} (worst {worst_cpu:.2f})")
        if not args.no_floor:
            work = "opt lto<O2> + llc + ptxas -O3 per arch, run alone"
            print(f"\nthe device work the same SASS needs ({work}, best of {runs}):")
            print("| program | device work CPU | clang CUDA CPU (best) | lowest reachable ratio |")
            print("|---|---|---|---|")
            for (n, a), build in builds.items():
                floor, theirs = device_floor(build, runs), best_cpu[(n, a, "clang CUDA")]
                name = f"{n} kernel{'s' if n > 1 else ''}, {' + '.join(build.archs)}"
                print(f"| {name} | {floor:.2f} s | {theirs:.2f} s | {floor / theirs:.2f} |")
        if not args.no_stages:
            largest = builds[max(builds)]
            command, environment = our_link_command(largest)
            print(f"\nstages, {largest.kernels} kernels, {' + '.join(largest.archs)} (one run each; wall, CPU):")
            for title, stages in (
                ("mlir-offload compile (compile -v)", compile_stages(largest)),
                ("mlir-offload link (its clang command)", driver_stages(largest, command, environment)),
                ("  ptxas in our link", ptxas_alone(largest)),
                ("clang CUDA compile", driver_stages(largest, largest.clang_compile())),
                ("clang CUDA link", driver_stages(largest, largest.clang_link())),
            ):
                rows = [(n, w, c) for n, (w, c) in stages.items()]
                top = [(w, c) for n, w, c in rows if not n.startswith("  ") or title.startswith("  ")]
                wall_total, cpu_total = sum(w for w, _ in top), sum(c or 0.0 for _, c in top)
                if not title.startswith("  "):
                    print(f"  {title}: {wall_total:.2f} s wall, {cpu_total:.2f} s CPU")
                for name, wall, cpu in rows:
                    cpu_text = f"{cpu:6.2f} s CPU" if cpu is not None else " " * 12
                    print(f"    {name:<60} {wall:6.2f} s wall {cpu_text}")
        if not args.no_sass:
            for build in builds.values():
                if build.kernels == max(sizes):
                    print(f"\nfinal SASS, {build.kernels} kernels (ptxas -O3 -v of each build's PTX):")
                    print("\n".join(sass_comparison(build)))


if __name__ == "__main__":
    main()
