"""Which upstream MLIR passes lower the ops of a dialect that mlir-offload's own lowering does not, so an
error for such an op can name the --pass-pipeline that fixes it (each checked by tests/unit/mlir/test_lowering_hints.py
on an op of the dialect, for the entries marked so there)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from offload.errors import OffloadError, Part
from offload.options import compile_option

# dialect -> passes, in pipeline order, that take its ops to dialects mlir-offload lowers.
LOWERING_PASSES: dict[str, tuple[str, ...]] = {
    "linalg": ("convert-linalg-to-loops",),
    "tensor": ("one-shot-bufferize{bufferize-function-boundaries}", "convert-linalg-to-loops"),
    "bufferization": ("one-shot-bufferize{bufferize-function-boundaries}",),
    "tosa": (
        "func.func(tosa-to-linalg)",
        "one-shot-bufferize{bufferize-function-boundaries}",
        "convert-linalg-to-loops",
    ),
    "shape": ("convert-shape-to-std",),
    "complex": ("convert-complex-to-standard",),
    "sparse_tensor": ("sparsifier",),
    "omp": ("convert-openmp-to-llvm",),
}


def pipeline_hint(op_name: str) -> tuple[Part, ...]:
    """`--pass-pipeline='builtin.module(...)'` naming the passes for the op's dialect, or the generic
    advice when none is known (the option a Mention: the front end words it)."""
    passes = LOWERING_PASSES.get(op_name.split(".", 1)[0])
    if passes is None:
        pipeline = compile_option("pass_pipeline", "'builtin.module(...)'", joined=True)
        return ("lower it first with ", pipeline, " (the upstream passes for its dialect)")
    return (
        "lower it first with ",
        compile_option("pass_pipeline", f"'builtin.module({','.join(passes)})'", joined=True),
    )


__all__ = ["LOWERING_PASSES", "pipeline_hint"]


def leftover_error(leftovers: Sequence, cannot_lower: Callable[[str], str], path: str) -> OffloadError:
    """The error for the ops a lowering left behind: the first real one (a conversion cast only marks
    where a real leftover's value flows), what cannot lower it, and the passes that would, at its line."""
    from offload.mlir.frontend import location_of

    culprit = next((op for op in leftovers if op.name != "builtin.unrealized_conversion_cast"), leftovers[0])
    return OffloadError((cannot_lower(culprit.name), *pipeline_hint(culprit.name)), location_of(culprit.location, path))
