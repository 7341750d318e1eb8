"""MLIR's sparse tensor runtime (libmlir_c_runner_utils' SparseTensorRuntime, with getTensorFilename), which
the bundle does not provide: which functions are its (by the prefixes of their names), what in a program
calls them, and whether a link names the user's copy of the library. compile records the first function
the host calls (the bundle record's sparse-tensor-runtime); link refuses a bundle that calls it unless the
link names the library."""

from __future__ import annotations

import os
from dataclasses import dataclass

from offload.errors import Location, OffloadError

LIBRARY = "mlir_c_runner_utils"  # the -l name of MLIR's library that holds the runtime


@dataclass(frozen=True)
class SparseTensorRuntimeUse:
    """Functions of the runtime, by the prefixes of their names: what in the program calls them, its fix."""

    prefixes: tuple[str, ...]
    caller: str
    fix: str


SPARSE_TENSOR_RUNTIME = (
    SparseTensorRuntimeUse(
        prefixes=(
            "_mlir_ciface_createCheckedSparseTensorReader",
            "_mlir_ciface_getSparseTensorReader",
            "createCheckedSparseTensorReader",
            "getSparseTensorReader",
            "delSparseTensorReader",
            "readSparseTensorShape",
            "getTensorFilename",
            "_mlir_ciface_outSparseTensorWriter",
            "_mlir_ciface_createSparseTensorWriter",
            "outSparseTensorWriter",
            "createSparseTensorWriter",
            "delSparseTensorWriter",
        ),
        caller="sparse_tensor.new or sparse_tensor.out reads or writes a file through it, "
        "whatever enable-runtime-library says",
        fix="build the tensor in the program (sparse_tensor.convert of a constant, sparse_tensor.assemble)",
    ),
    SparseTensorRuntimeUse(
        prefixes=(
            "_mlir_ciface_newSparseTensor",
            "_mlir_ciface_sparse",
            "_mlir_ciface_lexInsert",
            "_mlir_ciface_expInsert",
            "endLexInsert",
            "delSparseTensor",
            "sparseLvlSize",
            "sparseDimSize",
        ),
        caller="the sparsifier's enable-runtime-library=true",
        fix="use enable-runtime-library=false",
    ),
)


def use_of(function: str) -> SparseTensorRuntimeUse | None:
    return next((use for use in SPARSE_TENSOR_RUNTIME if function.startswith(use.prefixes)), None)


def first_runtime_function(declared) -> str:
    """The function of the runtime a refusal names among the host's `declared` functions ('' for none):
    the first by name of the first use in SPARSE_TENSOR_RUNTIME's order."""
    for use in SPARSE_TENSOR_RUNTIME:
        called = sorted(name for name in declared if name.startswith(use.prefixes))
        if called:
            return called[0]
    return ""


def names_the_library(inputs) -> bool:
    """Whether link arguments name MLIR's library: -lmlir_c_runner_utils (or -l mlir_c_runner_utils,
    -l:libmlir_c_runner_utils.so.22.1) or its file (libmlir_c_runner_utils.so, .so.N..., .a)."""
    words = list(inputs)
    for index, word in enumerate(words):
        name = word[2:] if word.startswith("-l") else None
        if word == "-l" and index + 1 < len(words):
            name = words[index + 1]
        if name is not None:
            if name == LIBRARY or name.startswith(f":lib{LIBRARY}."):
                return True
        elif os.path.basename(word).startswith(f"lib{LIBRARY}."):
            return True
    return False


def refusal(function: str) -> str:
    use = use_of(function)
    caller, fix = (use.caller, use.fix) if use else ("", "")
    return (
        f"the program calls MLIR's sparse tensor runtime ('{function}': {caller}), which mlir-offload does not "
        f"provide: link your lib{LIBRARY} (-l{LIBRARY} with -L its folder, or the file) or {fix}"
    )


def shipped_refusal(function: str) -> tuple[str, str]:
    """(problem, fix) a shipped archive's build.sh gives when its link names no libmlir_c_runner_utils."""
    use = use_of(function)
    caller, fix = (use.caller, use.fix) if use else ("", "")
    return (
        f"the program calls MLIR's sparse tensor runtime ('{function}': {caller}), which the archive does not provide",
        f"name your lib{LIBRARY}: make LDLIBS='-L/path/to/its/folder -l{LIBRARY} -Wl,-rpath,/path/to/its/folder' "
        f"(or LDLIBS=/path/to/lib{LIBRARY}.so), or change the program and re-ship it ({fix})",
    )


def requirement(function: str) -> str:
    """What inspect and doctor say of a bundle whose host calls the runtime (`function`: the first)."""
    return f"lib{LIBRARY} (MLIR's sparse tensor runtime: the program calls {function}), from the user's link"


def refuse_unlinked(bundles, inputs, shown=None) -> None:
    """A bundle whose host calls the runtime, in a link that does not name the library: one line naming
    the function instead of an undefined symbol from the linker. `shown`: the names messages give inputs."""
    if names_the_library(inputs):
        return
    for bundle in bundles:
        function = bundle.record.sparse_tensor_runtime
        if function:
            raise OffloadError(refusal(function), Location((shown or {}).get(bundle.path, bundle.path)))


__all__ = [
    "LIBRARY",
    "SPARSE_TENSOR_RUNTIME",
    "SparseTensorRuntimeUse",
    "first_runtime_function",
    "names_the_library",
    "refuse_unlinked",
    "refusal",
    "requirement",
    "shipped_refusal",
    "use_of",
]
