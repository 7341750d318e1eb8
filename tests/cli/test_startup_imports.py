"""What a command loads besides its own machinery: nothing heavy it does not use. Start-up is CPU that a
`make -j` pays once per file (docs/performance.md): a link never loads MLIR's bindings or llvmlite (40 and
20 ms), no command the remote cache's client (redis) or certifi, and a compile no MLIR dialect module the
program needs no op of (5 to 15 ms each), and mlir.dialects.llvm once, not in each forked child."""

from __future__ import annotations

import subprocess
import sys

from conftest import REPO, run_cli

# Every import of a watched module, in every process of the command (forked children keep the audit
# hook): "PID MODULE" per line. The hook comes after site, so what the interpreter's own start loads
# (a .pth file's certifi) is not the command's.
PROBE = r"""
import os, sys
log, watched = sys.argv[1], tuple(sys.argv[2].split(","))

def note(event, args):
    if event == "import" and (args[0] in watched or args[0].startswith(tuple(w + "." for w in watched))):
        with open(log, "a") as f:
            f.write(f"{os.getpid()} {args[0]}\n")

sys.addaudithook(note)
from offload.cli import main

main(sys.argv[3:])
"""

HEAVY = ("mlir", "llvmlite", "redis", "certifi", "offload.cache.remote")


def imports_of(tmp_path, watched: tuple[str, ...], *words: str) -> list[tuple[str, str]]:
    """(pid, module) for each watched module `mlir-offload WORDS` imported, in import order."""
    log = tmp_path / "imports.log"
    log.unlink(missing_ok=True)
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(log), ",".join(watched), *words],
        cwd=tmp_path,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    lines = log.read_text().splitlines() if log.exists() else []
    return [(pid, module) for pid, module in (line.split() for line in lines)]


def test_help_and_a_command_help_load_nothing_heavy(tmp_path):
    for words in (["--help"], ["compile", "--help"], ["link", "--help"]):
        assert imports_of(tmp_path, HEAVY, *words) == [], words


def test_compile_loads_no_link_machinery_and_no_unused_dialect(tmp_path):
    source = REPO / "examples" / "saxpy.mlir"  # no subgroup, printf or narrow-element op: no rewrite builds an op
    watched = (*HEAVY, "offload.commands.link", "offload.toolchain.link", "mlir.dialects.nvvm")
    loaded = imports_of(tmp_path, watched, "compile", str(source), "--offload-arch", "sm_80", "-o", "s.bc")
    modules = [module for _, module in loaded]
    assert "mlir.ir" in modules and "llvmlite.binding" in modules  # the probe sees what a compile loads
    for unwanted in ("redis", "certifi", "offload.cache.remote", "offload.commands.link", "offload.toolchain.link"):
        assert unwanted not in modules
    assert "mlir.dialects.nvvm" not in modules  # the device lowering's broadcast rewrite found nothing to build
    # The host and device lowerings' children inherit mlir.dialects.llvm from the compile's process.
    assert [pid for pid, module in loaded if module == "mlir.dialects.llvm"] == [loaded[0][0]]


def test_link_loads_neither_mlir_nor_llvmlite(tmp_path):
    source = REPO / "examples" / "saxpy.mlir"
    for image in ("bitcode", "cubin"):
        bundle = f"saxpy.{image}.bc"
        compiled = run_cli(
            "compile", str(source), "--offload-arch", "sm_80", f"--device-image={image}", "-o", bundle, cwd=tmp_path
        )
        if compiled.returncode != 0:  # a cubin needs ptxas
            assert image == "cubin" and "ptxas" in compiled.stderr, compiled.stderr
            continue
        assert imports_of(tmp_path, HEAVY, "link", bundle, "-o", "app", "--dry-run") == [], image
