"""Registers, spills, stack and shared memory per kernel and arch, read from `ptxas -v` (nvcc's
--resource-usage prints the same facts). At link, clang's linker wrapper runs ptxas for bitcode images
(-Xoffload-linker -v makes it verbose); cubin images were assembled at compile, and only nvlink's
verbose lines (no spill counts) describe them there."""

from __future__ import annotations

import re
from dataclasses import dataclass

# The ptxas -v lines that carry the figures (CUDA 11 to 13 print them so).
PTXAS_ENTRY = re.compile(r"^ptxas info\s*: Compiling entry function '(?P<name>[^']+)' for '(?P<arch>[^']+)'")
PTXAS_PROPERTIES = re.compile(r"^ptxas info\s*: Function properties for (?P<name>\S+)")
PTXAS_FRAME = re.compile(
    r"^\s+(?P<stack>\d+) bytes stack frame, (?P<stores>\d+) bytes spill stores, "
    r"(?P<loads>\d+) bytes spill loads"
)
PTXAS_USED = re.compile(r"^ptxas info\s*: Used (?P<registers>\d+) registers")
NVLINK_COMMAND = re.compile(r"nvlink\"? .*-arch[ =](?P<arch>sm_\w+)")
NVLINK_PROPERTIES = re.compile(r"^nvlink info\s*: Function properties for '(?P<name>[^']+)'")
NVLINK_USED = re.compile(r"^nvlink info\s*: used (?P<registers>\d+) registers.*?(?P<stack>\d+) stack")
SHARED = re.compile(r"(\d+) bytes smem")
CONSTANT = re.compile(r"(\d+) bytes cmem\[0\]")
PTXAS_VERBOSE_LINE = re.compile(r"^(ptxas info|ptxas warning|\s+\d+ bytes stack frame)")


@dataclass(frozen=True)
class KernelResources:
    kernel: str
    arch: str
    registers: int
    spill_stores: int | None  # None: not reported (nvlink's lines)
    spill_loads: int | None
    stack: int
    shared: int
    constant: int

    def line(self) -> str:
        spills = (
            "spills unknown"
            if self.spill_stores is None
            else f"{self.spill_stores} bytes spill stores, {self.spill_loads} bytes spill loads"
        )
        return (
            f"{self.arch} {self.kernel}: {self.registers} registers, {spills}, {self.stack} bytes stack, "
            f"{self.shared} bytes shared, {self.constant} bytes constant"
        )


def _bytes(pattern: re.Pattern, line: str) -> int:
    found = pattern.search(line)
    return int(found.group(1)) if found else 0


def read_ptxas_verbose(text: str) -> list[KernelResources]:
    """The kernels `ptxas -v` (or, for kernels ptxas did not assemble here, `nvlink -v`) reports in `text`,
    one record per kernel and arch, in the order reported."""
    from_ptxas: list[KernelResources] = []
    from_nvlink: list[KernelResources] = []
    entry = frame = None
    nvlink_arch = nvlink_name = None
    for line in text.splitlines():
        if found := PTXAS_ENTRY.match(line):
            entry, frame = (found["name"], found["arch"]), None
        elif (found := PTXAS_PROPERTIES.match(line)) and entry and found["name"] != entry[0]:
            frame = None  # a device function's properties follow, not the kernel's
        elif (found := PTXAS_FRAME.match(line)) and entry:
            frame = found
        elif (found := PTXAS_USED.match(line)) and entry:
            from_ptxas.append(
                KernelResources(
                    entry[0],
                    entry[1],
                    int(found["registers"]),
                    int(frame["stores"]) if frame else 0,
                    int(frame["loads"]) if frame else 0,
                    int(frame["stack"]) if frame else 0,
                    _bytes(SHARED, line),
                    _bytes(CONSTANT, line),
                )
            )
            entry = frame = None
        elif found := NVLINK_COMMAND.search(line):
            nvlink_arch = found["arch"]
        elif found := NVLINK_PROPERTIES.match(line):
            nvlink_name = found["name"]
        elif (found := NVLINK_USED.match(line)) and nvlink_name and nvlink_arch:
            from_nvlink.append(
                KernelResources(
                    nvlink_name,
                    nvlink_arch,
                    int(found["registers"]),
                    None,
                    None,
                    int(found["stack"]),
                    _bytes(SHARED, line),
                    _bytes(CONSTANT, line),
                )
            )
            nvlink_name = None
    seen = {(r.kernel, r.arch) for r in from_ptxas}
    return from_ptxas + [r for r in from_nvlink if (r.kernel, r.arch) not in seen]


def ptxas_verbose_lines(text: str) -> list[str]:
    """ptxas's own -v lines in `text` (what nvcc -Xptxas -v shows), without the tools' command lines."""
    return [line for line in text.splitlines() if PTXAS_VERBOSE_LINE.match(line)]


__all__ = ["KernelResources", "ptxas_verbose_lines", "read_ptxas_verbose"]
