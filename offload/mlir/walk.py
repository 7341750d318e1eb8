"""The ops of an MLIR operation that a rewrite changes, found before it changes any."""

from __future__ import annotations

from collections.abc import Callable


def ops_where(operation, matches: Callable, ir) -> list:
    """Every op nested in `operation` (itself included) for which `matches(op)` holds, in the walk's post
    order. Collected first, rewritten after: changing the IR or raising inside the walk's callback is not
    safe (an exception there becomes a RuntimeError)."""
    found = []

    def collect(op):
        if matches(op):
            found.append(op)
        return ir.WalkResult.ADVANCE

    operation.walk(collect)
    return found
