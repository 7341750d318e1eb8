#!/usr/bin/env python3
"""Run the project's own checked programs on a real GPU and compare with their CHECK lines and the emulator.

Three steps, for a session that has a GPU machine beside a build machine (the GPU machine needs only the
CUDA driver: executables link libcudart statically):

    python scripts/gpu_check.py build --arch sm_90 --out .gpu [-L DIR]   # here: GPU executables + emulated outputs
    bash .gpu/run_all.sh .gpu "$OUT"                               # on the GPU machine: runs each, writes results.tar
    python scripts/gpu_check.py check --out .gpu --results results.tar   # here: FileCheck + diff against emulation

Programs: tests/data/{emulate,upstream_style,async,hopper}/*.mlir and examples/*.mlir that run on NVIDIA
(a program with `// ARCHS:` naming no sm_ arch is skipped). A program with CHECK lines is FileChecked with
the prefixes CHECK,SM80 (the NVIDIA lines) against the GPU's output; every program's GPU output is also
compared with its emulated output (same bytes, or the differing lines are printed).
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SOURCES = [
    *sorted((REPO / "tests" / "data" / "emulate").glob("*.mlir")),
    *sorted((REPO / "tests" / "data" / "upstream_style").glob("*.mlir")),
    *sorted((REPO / "tests" / "data" / "async").glob("*.mlir")),
    *sorted((REPO / "tests" / "data" / "hopper").glob("*.mlir")),
    *sorted((REPO / "examples").glob("*.mlir")),
]
HOPPER_ONLY = {"cluster_launch", "tma_tile"}
SANITIZER_TOOLS = ("memcheck", "racecheck", "initcheck", "synccheck")


def header_field(text: str, key: str) -> list[str]:
    prefix = f"// {key}: "
    return [line[len(prefix) :] for line in text.splitlines() if line.startswith(prefix)]


def runs_on_nvidia(source: Path, text: str) -> bool:
    archs = " ".join(header_field(text, "ARCHS")).split()
    return not source.stem.startswith("hip_") and (not archs or any(arch.startswith("sm_") for arch in archs))


def offload(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "offload", *args], cwd=REPO, capture_output=True, text=True, timeout=600
    )


def build(arch: str, out: Path, library_dirs: list[str]) -> int:
    out.mkdir(parents=True, exist_ok=True)
    names: list[str] = []
    for source in SOURCES:
        text = source.read_text()
        if not runs_on_nvidia(source, text):
            continue
        name = f"{source.parent.name}-{source.stem}"
        hopper = source.stem in HOPPER_ONLY or "sm_90a" in " ".join(header_field(text, "ARCHS")).split()
        target = f"{arch}a" if hopper and not arch.endswith("a") else arch
        pipeline = " ".join(header_field(text, "PASS-PIPELINE"))
        extra = ["--pass-pipeline", pipeline] if pipeline else []
        bundle = out / f"{name}.offload.bc"
        done = offload("compile", str(source), *extra, "--offload-arch", target, "-o", str(bundle))
        if done.returncode != 0:
            print(f"{name}: compile failed: {done.stderr.strip()[:300]}")
            continue
        search = [f"-L{folder}" for folder in library_dirs]  # libcusparse when the toolkit has none
        done = offload("link", str(bundle), "--cudart", "static", *search, "-o", str(out / name))
        if done.returncode != 0:
            print(f"{name}: link failed: {done.stderr.strip()[:300]}")
            continue
        emulated = offload(
            "run", str(source), *extra, "--emulate", "--offload-arch", "sm_90a" if target.endswith("a") else "sm_80"
        )
        (out / f"{name}.emu.out").write_text(emulated.stdout)
        (out / f"{name}.emu.rc").write_text(f"{emulated.returncode}\n")
        (out / f"{name}.source").write_text(str(source.relative_to(REPO)) + "\n")
        bundle.unlink()
        names.append(name)
        print(f"{name}: built for {target}; emulated exit {emulated.returncode}")
    write_runner(out, names)
    print(f"{len(names)} programs built into {out}; run: bash {out}/run_all.sh {out} OUTDIR [SECONDS]")
    return 0


def write_runner(out: Path, names: list[str]) -> None:
    lines = [
        "#!/usr/bin/env bash",
        "# Runs each executable on the GPU, then under compute-sanitizer's tools while the time budget ($3 seconds,",
        "# default 300) lasts; results.tar goes into $2 after each pass (what finished comes back if it is stopped).",
        'set -u; dir="$1"; dest="$2"; budget="${3:-300}"; res="$(mktemp -d)"; cd "$dir"; start=$SECONDS',
        "sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)",
        'nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$res/gpu.txt" 2>&1',
    ]
    for name in names:
        q = shlex.quote(name)
        lines.append(
            f'timeout 60 ./{q} > "$res/{name}.gpu.out" 2> "$res/{name}.gpu.err"; echo $? > "$res/{name}.gpu.rc"'
        )
    lines.append('tar cf "$dest/results.tar" -C "$res" .')
    for tool in SANITIZER_TOOLS:
        for name in names:
            q = shlex.quote(name)
            lines.append(
                f'[ -n "$sanitizer" ] && [ $((SECONDS - start)) -lt "$budget" ] && {{ timeout 30 "$sanitizer" '
                f'--tool {tool} --error-exitcode 99 ./{q} > "$res/{name}.{tool}.out" 2>&1; '
                f'echo $? > "$res/{name}.{tool}.rc"; }}'
            )
        lines.append('tar cf "$dest/results.tar" -C "$res" .')
    script = out / "run_all.sh"
    script.write_text("\n".join(lines) + "\n")
    script.chmod(0o755)


def normalized(output: str) -> list[str]:
    """The output's lines with host addresses (printMemref's `base@ = 0x...`) blanked."""
    return [" ".join("0x?" if word.startswith("0x") else word for word in line.split()) for line in output.splitlines()]


def check(out: Path, results: Path) -> int:
    filecheck = shutil.which("FileCheck-22") or "/usr/lib/llvm-22/bin/FileCheck"
    unpacked = out / "results"
    shutil.rmtree(unpacked, ignore_errors=True)
    unpacked.mkdir()
    with tarfile.open(results) as archive:
        archive.extractall(unpacked, filter="data")
    print("GPU:", (unpacked / "gpu.txt").read_text().strip() if (unpacked / "gpu.txt").exists() else "?")
    failures = 0
    for source_file in sorted(out.glob("*.source")):
        name = source_file.name[: -len(".source")]
        source = REPO / source_file.read_text().strip()
        gpu_out = (unpacked / f"{name}.gpu.out").read_text(errors="replace")
        rc = (unpacked / f"{name}.gpu.rc").read_text().strip()
        emu_out = (out / f"{name}.emu.out").read_text()
        verdicts = [f"exit {rc}"]
        if "// CHECK" in source.read_text():
            checked = subprocess.run(
                [filecheck, str(source), "--check-prefixes=CHECK,SM80", "--allow-unused-prefixes"],
                input=gpu_out,
                capture_output=True,
                text=True,
            )
            verdicts.append("FileCheck " + ("pass" if checked.returncode == 0 else "FAIL"))
            failures += checked.returncode != 0
        same = normalized(gpu_out) == normalized(emu_out)
        if same:
            verdicts.append("output = emulated")
        elif sorted(normalized(gpu_out)) == sorted(normalized(emu_out)):
            verdicts.append("output = emulated, lines in another order")
        else:
            verdicts.append("output differs from emulated")
        sanitizer = []
        for tool in SANITIZER_TOOLS:
            path = unpacked / f"{name}.{tool}.rc"
            if path.exists():
                tool_rc = path.read_text().strip()
                sanitizer.append(f"{tool} {'clean' if tool_rc == '0' else 'rc ' + tool_rc}")
        failures += rc != "0"
        print(f"{name}: {'; '.join(verdicts)}; {', '.join(sanitizer)}")
        if not same and os.environ.get("GPU_CHECK_DIFF"):
            for left, right in zip(gpu_out.splitlines(), emu_out.splitlines(), strict=False):
                if left != right:
                    print(f"    gpu: {left[:150]}\n    emu: {right[:150]}")
    print(f"{failures} failure(s)")
    return 1 if failures else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="step", required=True)
    b = sub.add_parser("build")
    b.add_argument("--arch", default="sm_90")
    b.add_argument("--out", type=Path, default=REPO / ".gpu")
    b.add_argument(
        "-L",
        dest="library_dirs",
        action="append",
        default=[],
        help="a folder of libraries the sparse programs link (libcusparse.so, e.g. the nvidia-cusparse wheel's "
        "nvidia/cu13/lib) where the CUDA toolkit here has none; the GPU machine loads its own",
    )
    c = sub.add_parser("check")
    c.add_argument("--out", type=Path, default=REPO / ".gpu")
    c.add_argument("--results", type=Path, required=True)
    args = parser.parse_args()
    return build(args.arch, args.out, args.library_dirs) if args.step == "build" else check(args.out, args.results)


if __name__ == "__main__":
    sys.exit(main())
