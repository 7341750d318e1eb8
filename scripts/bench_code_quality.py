#!/usr/bin/env python3
"""Device code quality after the target link, ours against upstream's, per kernel.

Ours: `mlir-offload compile` (bitcode device image, pre-link pipeline), then `mlir-offload link` with
clang-22 --offload-new-driver -save-temps: clang-linker-wrapper LTO-links and optimizes the image and
keeps the PTX it hands to ptxas. A second column compiles with MLIR_OFFLOAD_OPT=llvmlite (the whole
default<O3> pipeline in-process) to show what the pre-link pipeline changes. Upstream: mlir-opt-22 with
gpu-module-to-binary{format=isa} at O=3 (its PTX). Every PTX goes through the same `ptxas -O3 -v`:
registers and spill bytes from its report, SASS instructions from the cubin (.text.<kernel> bytes / 16:
every instruction from sm_70 on is 16 bytes; cuobjdump/nvdisasm are not in this toolkit)."""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

ARCH_FEATURES = {"sm_80": "+ptx70", "sm_90": "+ptx78"}
# Like with like: upstream sets no __CUDA_PREC_SQRT, so libdevice's sqrtf is the approximate one; ours
# defaults to IEEE sqrt as nvcc does (32 more SASS instructions per kernel with a sqrt, same registers).
LIKE_UPSTREAM = "--no-prec-sqrt"


@dataclass
class KernelCode:
    instructions: int
    registers: int
    spill_bytes: int  # stores + loads


def run(command: list[str], **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if done.returncode != 0:
        sys.exit(f"failed: {' '.join(command)}\n{done.stderr}")
    return done


def ptxas_report(ptx: Path, arch: str, ptxas: str) -> dict[str, KernelCode]:
    """Per kernel: SASS instructions, registers and spill bytes of `ptxas -O3 -v`."""
    from offload.formats.elf import read_elf

    cubin = ptx.with_suffix(".cubin")
    log = run([ptxas, f"-arch={arch}", "-O3", "-v", str(ptx), "-o", str(cubin)]).stderr
    registers, spills, function = {}, {}, None
    for line in log.splitlines():
        if m := re.search(r"(?:Compiling entry function|Function properties for) '?([\w.$]+)'?", line):
            function = m.group(1)
        elif (m := re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", line)) and function:
            spills[function] = int(m.group(1)) + int(m.group(2))
        elif (m := re.search(r"Used (\d+) registers", line)) and function:
            registers[function] = int(m.group(1))
    elf = read_elf(cubin.read_bytes(), str(cubin))
    texts = {name: elf.section(f".text.{name}") for name in registers}
    return {
        name: KernelCode(text.size // 16, registers[name], spills.get(name, 0)) for name, text in texts.items() if text
    }


def our_ptx(source: Path, arch: str, work: Path, environment: dict, flags: Sequence[str]) -> Path:
    """The PTX clang-linker-wrapper made from our bundle at the executable's link."""
    work.mkdir()
    bundle = work / "bench.offload.bc"
    offload = [sys.executable, "-m", "offload"]
    run(
        [*offload, "compile", str(source), "--offload-arch", arch, "--no-cache", *flags, "-o", str(bundle)],
        env=environment,
    )
    (work / "main.c").write_text("int main(void) { return 0; }\n")
    # The clang command link would run, run here: -save-temps leaves its temporaries in this folder.
    command = run(
        [*offload, "link", str(bundle), "main.c", "-save-temps", "-o", "app", "--dry-run"], cwd=work, env=environment
    ).stdout
    run(shlex.split(command.strip().splitlines()[-1]), cwd=work)
    return work / f"app.nvptx64.{arch}.s"


def upstream_ptx(source: Path, arch: str, work: Path, cuda: str) -> Path:
    from mlir import ir
    from mlir.dialects import gpu

    mlir_opt = shutil.which("mlir-opt-22") or "/usr/lib/llvm-22/bin/mlir-opt"
    pipeline = (
        f"builtin.module(nvvm-attach-target{{chip={arch} features={ARCH_FEATURES[arch]} O=3}},"
        "gpu.module(convert-scf-to-cf,convert-gpu-to-nvvm,canonicalize,cse,reconcile-unrealized-casts),"
        f"gpu-module-to-binary{{format=isa toolkit={cuda}}})"
    )
    lowered = work / "upstream.mlir"
    run([mlir_opt, str(source), f"--pass-pipeline={pipeline}", "-o", str(lowered)])
    with ir.Context():
        module = ir.Module.parse(lowered.read_text())
        [binary] = [op for op in module.body.operations if op.name == "gpu.binary"]
        [attribute] = list(binary.attributes["objects"])
        text = gpu.ObjectAttr(attribute).object
    ptx = work / "upstream.ptx"
    ptx.write_bytes(text)
    return ptx


def compare(source: Path, arch: str, cuda: str, flags: Sequence[str] = ()) -> list[str]:
    """The per-kernel table (and a summary line) as printable lines."""
    ptxas = str(Path(cuda) / "bin" / "ptxas")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        environment = {**os.environ, "PYTHONPATH": str(REPO)}
        columns = {
            "upstream": upstream_ptx(source, arch, work, cuda),
            "ours": our_ptx(source, arch, work / "ours", environment, flags),
            "ours-default<O3>": our_ptx(
                source, arch, work / "full", {**environment, "MLIR_OFFLOAD_OPT": "llvmlite"}, flags
            ),
        }
        reports = {name: ptxas_report(ptx, arch, ptxas) for name, ptx in columns.items()}
    kernels = sorted(reports["upstream"], key=lambda k: (len(k), k))
    lines = [
        f"code quality on {arch} after the target link (ptxas -O3 -v; instr = SASS instructions, "
        "regs, spill = spill bytes):",
        f"{'kernel':<12}" + "".join(f"{name:>28}" for name in reports),
    ]
    worse = {name: 0 for name in reports}
    totals = {name: [0, 0, 0] for name in reports}
    for kernel in kernels:
        cells = []
        for name, report in reports.items():
            code = report[kernel]
            base = reports["upstream"][kernel]
            if (
                code.instructions > base.instructions
                or code.registers > base.registers
                or code.spill_bytes > base.spill_bytes
            ):
                worse[name] += 1
            totals[name][0] += code.instructions
            totals[name][1] += code.registers
            totals[name][2] += code.spill_bytes
            cells.append(f"{code.instructions:>6} instr {code.registers:>3} regs {code.spill_bytes:>3} spill")
        lines.append(f"{kernel:<12}" + "".join(f"{c:>28}" for c in cells))
    lines.append(
        f"{'total':<12}" + "".join(f"{t[0]:>6} instr {t[1]:>3} regs {t[2]:>3} spill".rjust(28) for t in totals.values())
    )
    lines.append(
        "kernels worse than upstream in any of instr/regs/spill: "
        + ", ".join(f"{name} {count}/{len(kernels)}" for name, count in worse.items())
    )
    return lines


def main() -> None:
    from bench_device import generate

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=100)
    parser.add_argument("--arch", default="sm_80", choices=sorted(ARCH_FEATURES))
    parser.add_argument("--cuda", default=os.environ.get("CUDA_HOME", "/usr/local/cuda"))
    parser.add_argument(
        "--our-flags",
        default=LIKE_UPSTREAM,
        help=f"our compile flags (default {LIKE_UPSTREAM!r}: upstream's semantics, see LIKE_UPSTREAM)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "bench.mlir"
        source.write_text(generate(args.kernels))
        print("\n".join(compare(source, args.arch, args.cuda, args.our_flags.split())))


if __name__ == "__main__":
    main()
