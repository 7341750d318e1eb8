"""The GPUs of this machine, for --offload-arch=native (as clang's): LLVM's offload-arch tool (nvptx-arch and
amdgpu-arch in one), else nvidia-smi's compute capability."""

from __future__ import annotations

import re
import shutil
import subprocess

NATIVE = "native"
# LLVM releases whose offload-arch (or nvptx-arch / amdgpu-arch) may be installed beside their clang.
LLVM_MAJORS = (22, 21, 20, 19, 18)
ARCH_LINE = re.compile(r"^(sm_\d+[a-z]?|gfx[0-9a-f]+)$")
DETECT_TIMEOUT_S = 30


def detectors() -> list[list[str]]:
    """The commands that list GPU archs, one per line, that this machine has (first found first)."""
    found = []
    for tool in ("offload-arch", "nvptx-arch", "amdgpu-arch"):
        for candidate in (tool, *(f"/usr/lib/llvm-{major}/bin/{tool}" for major in LLVM_MAJORS)):
            path = shutil.which(candidate)
            if path:
                found.append([path])
                break
    return found


def local_gpu_archs() -> tuple[list[str], list[str]]:
    """(the archs of this machine's GPUs in the order found, without repeats; the tools asked)."""
    archs: list[str] = []
    asked: list[str] = []
    for command in detectors():
        asked.append(command[0])
        archs += [line for line in _lines(command) if ARCH_LINE.match(line)]
        if archs and command[0].endswith("offload-arch"):  # it asked both vendors already
            break
    if not archs and shutil.which("nvidia-smi"):
        asked.append("nvidia-smi")
        for line in _lines(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"]):
            major, dot, minor = line.partition(".")
            if dot and major.isdigit() and minor.isdigit():
                archs.append(f"sm_{major}{minor}")
    return list(dict.fromkeys(archs)), asked


def _lines(command: list[str]) -> list[str]:
    try:
        done = subprocess.run(command, capture_output=True, text=True, errors="replace", timeout=DETECT_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return [line.strip() for line in done.stdout.splitlines()]
