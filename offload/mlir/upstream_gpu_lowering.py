"""A --pass-pipeline that contains upstream's own GPU lowering (the sparsifier with gpu-triple,
gpu-lower-to-nvvm-pipeline, convert-gpu-to-nvvm, gpu-module-to-binary, gpu-to-llvm, ...) runs up to that
lowering: mlir-offload compiles the device code and lowers the host's GPU operations itself. Registered
pipelines are expanded first (the pass manager prints them pass by pass), so a pass inside the sparsifier
is found like one written out."""

from __future__ import annotations

import sys
from dataclasses import dataclass

from offload.formats.vendors import VENDORS

# Passes that lower device code or the host's GPU operations the upstream way (libmlir_cuda_runtime,
# a gpu.binary of the pass's own compilation), which mlir-offload replaces: each vendor's lowering too.
UPSTREAM_GPU_LOWERING = frozenset(
    {
        *(vendor.lowering for vendor in VENDORS.values()),
        "convert-gpu-to-llvm-spv",
        "convert-nvgpu-to-nvvm",
        "convert-nvvm-to-llvm",
        "nvvm-attach-target",
        "rocdl-attach-target",
        "gpu-to-llvm",
        "gpu-module-to-binary",
    }
)
# Nested pass managers that run on device code only: all of it is replaced by mlir-offload's device step.
DEVICE_ANCHORS = frozenset({"gpu.module", "gpu.func"})
# Nested pass managers that run on host functions only: kept after the cut (the host-only lowering the
# pipeline does after its GPU passes, e.g. the sparsifier's expand-realloc and convert-linalg-to-loops).
HOST_ANCHORS = frozenset({"func.func"})


@dataclass
class CutPipeline:
    """The pipeline to run instead (None: nothing to run) and the passes it leaves out, in order."""

    pipeline: str | None
    replaced: list[str]


def top_level_entries(pipeline: str) -> tuple[str, list[str]] | None:
    """`anchor(a,b{x=1},c(d))` -> ("anchor", ["a", "b{x=1}", "c(d)"]), commas inside braces, parentheses or
    quotes kept; None for text of another shape."""
    text = pipeline.strip()
    open_at = text.find("(")
    if open_at <= 0 or not text.endswith(")"):
        return None
    anchor, body = text[:open_at].strip(), text[open_at + 1 : -1]
    entries, depth, quote, start = [], 0, "", 0
    for index, char in enumerate(body):
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char in "({":
            depth += 1
        elif char in ")}":
            depth -= 1
        elif char == "," and depth == 0:
            entries.append(body[start:index].strip())
            start = index + 1
    last = body[start:].strip()
    if last:
        entries.append(last)
    return anchor, entries


def entry_name(entry: str) -> str:
    """The pass or anchor an entry names: `gpu-to-llvm{...}` -> gpu-to-llvm, `gpu.module(...)` -> gpu.module."""
    for index, char in enumerate(entry):
        if char in "({":
            return entry[:index].strip()
    return entry.strip()


def _lowers_gpu(entry: str) -> bool:
    name = entry_name(entry)
    return name in UPSTREAM_GPU_LOWERING or name in DEVICE_ANCHORS


def cut_at_gpu_lowering(expanded: str) -> CutPipeline | None:
    """`expanded` (a printed builtin.module pass manager) up to its first upstream GPU lowering pass, then
    the host-function passes after it; None when it has no such pass."""
    parsed = top_level_entries(expanded)
    if parsed is None or parsed[0] != "builtin.module":
        return None
    anchor, entries = parsed
    first = next((index for index, entry in enumerate(entries) if _lowers_gpu(entry)), None)
    if first is None:
        return None
    kept = entries[:first] + [entry for entry in entries[first:] if entry_name(entry) in HOST_ANCHORS]
    replaced: list[str] = []
    device: dict[str, list[str]] = {}  # anchor -> the passes nested in it, in order
    for entry in entries[first:]:
        if not _lowers_gpu(entry):
            continue
        name = entry_name(entry)
        if name in DEVICE_ANCHORS:
            inner = top_level_entries(entry)
            if name not in device:
                device[name] = []
                replaced.append(name)
            device[name] += [entry_name(e) for e in inner[1]] if inner else []
        elif name not in replaced:
            replaced.append(name)
    replaced = [f"{name}({','.join(device[name])})" if name in device else name for name in replaced]
    return CutPipeline(pipeline=f"{anchor}({','.join(kept)})" if kept else None, replaced=replaced)


def sparsifier_runtime_library(pipeline: str) -> bool:
    """Whether a sparsifier of `pipeline` (as the user wrote it) asks for MLIR's sparse tensor runtime
    (enable-runtime-library, true unless given false). Its expansion cannot say so: the sparsification pass
    it makes has no textual option for it, so the passes before the cut run the runtime-free code."""
    parsed = top_level_entries(pipeline)
    for entry in parsed[1] if parsed else []:
        if entry_name(entry) != "sparsifier":
            continue
        options = entry[len("sparsifier") :].strip().strip("{}").split()
        value = "true"
        for option in options:
            key, _, given = option.partition("=")
            if key == "enable-runtime-library":
                value = given or "true"
        if value in ("true", "1"):
            return True
    return False


def announce_replaced(replaced: list[str], runtime_library: bool) -> None:
    """One line on a terminal naming what mlir-offload does instead of the pipeline's GPU lowering; never in
    pipes or logs (the programs' output stays theirs)."""
    if sys.stderr is None or not sys.stderr.isatty():
        return
    runtime = (
        "; the sparsifier's enable-runtime-library=true runs as false (MLIR's sparse tensor runtime is not "
        "in the bundle; the same results)"
        if runtime_library
        else ""
    )
    print(
        "mlir-offload: note: --pass-pipeline ran up to upstream's GPU lowering; mlir-offload compiles the "
        f"device code and lowers the host's GPU operations instead of: {', '.join(replaced)}{runtime}",
        file=sys.stderr,
        flush=True,
    )


__all__ = [
    "CutPipeline",
    "announce_replaced",
    "cut_at_gpu_lowering",
    "entry_name",
    "sparsifier_runtime_library",
    "top_level_entries",
]
