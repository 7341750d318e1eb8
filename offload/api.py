"""The Python API for DSL authors: compile MLIR (text, a file, or an in-memory `mlir.ir.Module` of the
caller's own context) into a bundle, and link bundles into an executable. Stable: these names and their
keyword arguments keep their meaning across releases; failures raise `OffloadError` (`.render()` is the
command line's one-line message, `.location` the file:line:col where one exists).

    from offload import api
    bundle = api.compile_module(module, offload_arch="sm_80")   # or compile_text / compile_file
    bundle.write("kernels.offload.bc")                          # + its PTX files, if any
    api.link(["kernels.offload.bc", "main.o"], "app")

The work is the `compile` and `link` commands' own (offload.compiler.plan, offload.compiler.stages,
offload.toolchain.link): the same flags give byte-identical bundles."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from offload.errors import OffloadError

__all__ = ["Bundle", "OffloadError", "compile_file", "compile_module", "compile_text", "link"]


@dataclass(frozen=True)
class Bundle:
    """A compiled bundle: its bytes and the files `compile` writes beside it."""

    data: bytes  # host LLVM bitcode (or textual IR, or an ELF object) with the device images embedded
    host_format: str  # "bc" | "obj": name the file .bc or .o accordingly (suffix)
    ptx: dict[str, str] = field(default_factory=dict)  # arch -> PTX (device_image="ptx" / portable)

    @property
    def suffix(self) -> str:
        return ".o" if self.host_format == "obj" else ".bc"

    def write(self, path: str | os.PathLike) -> Path:
        """Write the bundle to `path` and each PTX text to `<path>.<arch>.ptx` (what `link --ptx-beside`
        adds), all or nothing; returns the bundle's path."""
        from offload.compiler.outputs import ptx_path
        from offload.fsutil import write_all

        path = Path(path)
        if self.host_format == "obj" and path.suffix in (".bc", ".ll"):
            raise OffloadError(f"this bundle is an ELF object: name it {path.with_suffix('.o').name}, not {path.name}")
        write_all({str(path): self.data, **{ptx_path(str(path), arch): text.encode() for arch, text in self.ptx.items()}})
        return path


def compile_file(path: str | os.PathLike, offload_arch: str | list[str] | None = None, *, textual: bool = False,
                 **options: Any) -> Bundle:
    """Compile an MLIR file as `mlir-offload compile` does (its mlir-offload.toml applies, under the
    keywords given). offload_arch: "sm_80,sm_90", ["80", "90a"], "gfx90a" (None: the file's); textual: -S.
    Keywords: every option of offload/options.py marked api (offload.options.API_KEYWORDS), named as its
    field and typed as in mlir-offload.toml: opt_level=2, symbol_prefix="NAME", debug=True (-g),
    line_info=True (-lineinfo), device_image="cubin", host_format="obj", portable=True, cache=False, ..."""
    from offload.compiler.plan import compile_plan
    from offload.compiler.stages import compile_bundle
    from offload.config import project_config
    from offload.options import given_keywords, resolve

    path = str(path)
    given = given_keywords({"offload_arch": offload_arch, **options}, "compile_file")
    resolved = resolve(given, project_config(path))
    plan = compile_plan(path, None, textual, resolved.options, resolved.config_file)
    compiled = compile_bundle(plan)
    return Bundle(compiled.data, plan.bundle.host_format, dict(compiled.ptx))


def compile_text(text: str, offload_arch: str | list[str] | None = None, *, name: str = "module",
                 **options: Any) -> Bundle:
    """Compile MLIR source text; `name` is the file name its diagnostics and debug information use
    (<name>.mlir). Keyword options as compile_file's."""
    with tempfile.TemporaryDirectory(prefix="mlir-offload-api-") as folder:
        source = Path(folder) / f"{name}.mlir"
        source.write_text(text, encoding="utf-8")
        return compile_file(source, offload_arch, **options)


def compile_module(module, offload_arch: str | list[str] | None = None, *, name: str = "module",
                   **options: Any) -> Bundle:
    """Compile an in-memory `mlir.ir.Module` (gpu.module + host functions), made in the caller's own
    context and left untouched: it is printed with its locations and compiled in a context of ours.
    Keyword options as compile_file's."""
    operation = getattr(module, "operation", module)
    if not hasattr(operation, "get_asm"):
        raise OffloadError(f"compile_module takes an mlir.ir.Module, not {type(module).__name__}")
    operation.verify()
    return compile_text(operation.get_asm(enable_debug_info=True), offload_arch, name=name, **options)


def link(inputs: list, output: str | os.PathLike, *, clang: str | None = None, cuda_path: str | None = None,
         rocm_path: str | None = None, cudart: str = "shared", ptx_beside: bool = True,
         flags: list[str] = ()) -> Path:
    """Link bundles (paths, or Bundle objects) with objects, libraries and clang `flags` into the
    executable `output`, as `mlir-offload link` does; returns its path."""
    from offload.compiler.textual_ir import read_offload_images
    from offload.toolchain.link import find_bundles, link_bundle

    with tempfile.TemporaryDirectory(prefix="mlir-offload-api-") as folder:
        arguments = []
        for index, item in enumerate(inputs):
            if isinstance(item, Bundle):  # written where the link reads it, with its PTX beside
                item = item.write(Path(folder) / f"bundle{index}.offload{item.suffix}")
            arguments.append(os.fspath(item))
        arguments += list(flags)
        link_bundle(find_bundles(arguments, read_offload_images), arguments, os.fspath(output), clang=clang,
                    cuda_path=cuda_path, rocm_path=rocm_path, ptx_beside=ptx_beside, cudart=cudart)
    return Path(output)
