"""The Python API for DSL authors: compile MLIR (text, a file, or an in-memory `mlir.ir.Module` of the
caller's own context) into a bundle, and link bundles into an executable. Stable: these names and their
keyword arguments keep their meaning across releases; failures raise `OffloadError` (`.render()` is the
command line's one-line message, `.location` the file:line:col where one exists).

    from offload import api
    bundle = api.compile_module(module, offload_arch="sm_80")   # or compile_text / compile_file
    bundle.write("kernels.offload.bc")                          # + its PTX files, if any
    api.link(["kernels.offload.bc", "main.o"], "app")

The work is the `compile` and `link` commands' own (offload.driver.plan, offload.driver.stages,
offload.toolchain.link): the same flags give byte-identical bundles."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from offload.errors import KEYWORD, OffloadError
from offload.options import given_keywords, resolve
from offload.options.link import API_KEYWORDS as LINK_KEYWORDS
from offload.options.link import FLAGS as LINK_FLAGS
from offload.options.link import SPECS as LINK_SPECS
from offload.options.link import link_option, resolve_link
from offload.options.spec import SWITCH, from_file
from offload.options.spec import given_keywords as given_table_keywords

__all__ = ["Bundle", "OffloadError", "compile_file", "compile_module", "compile_text", "link"]


@dataclass(frozen=True, repr=False)
class Bundle:
    """A compiled bundle: its bytes and the files `compile` writes beside it."""

    data: bytes  # host LLVM bitcode (or textual IR, or an ELF object) with the device images embedded
    host_format: str  # "bc" | "obj": name the file .bc or .o accordingly (suffix)
    ptx: dict[str, str] = field(default_factory=dict)  # arch -> PTX (device_image="ptx" / portable)

    def __post_init__(self) -> None:
        # A Bundle may be made by hand: its PTX architectures name files beside it, so they stay plain names.
        if not isinstance(self.data, bytes):
            raise OffloadError(f"Bundle(): data expects bytes, got {type(self.data).__name__}")
        if self.host_format not in ("bc", "obj"):
            raise OffloadError(f"Bundle(): host_format expects 'bc' or 'obj', got {_describe(self.host_format)}")
        if not isinstance(self.ptx, dict) or not all(
            isinstance(arch, str) and arch.replace("_", "").isalnum() and arch.isascii() and isinstance(text, str)
            for arch, text in self.ptx.items()
        ):
            raise OffloadError(
                f"Bundle(): ptx expects a dict of architecture name (sm_80) -> PTX text, got {_describe(self.ptx)}"
            )

    def __repr__(self) -> str:
        # Short, as print() shows it: the bytes are kilobytes of bitcode, the PTX whole kernels.
        ptx = f", ptx for {', '.join(sorted(self.ptx))}" if self.ptx else ""
        return f"<Bundle: {len(self.data)} bytes of {'an ELF object' if self.host_format == 'obj' else 'bitcode'}{ptx}>"

    @property
    def suffix(self) -> str:
        return ".o" if self.host_format == "obj" else ".bc"

    def write(self, path: str | os.PathLike) -> Path:
        """Write the bundle to `path` and each PTX text to `<path>.<arch>.ptx` (what `link --ptx-beside`
        adds), all or nothing; returns the bundle's path."""
        from offload.driver.outputs import ptx_path
        from offload.fsutil import write_all

        if not isinstance(path, (str, os.PathLike)) or "\0" in os.fspath(path) or not os.fspath(path):
            raise OffloadError(f"Bundle.write(): path expects a file path, got {_describe(path)}")
        path = Path(path)
        if self.host_format == "obj" and path.suffix in (".bc", ".ll"):
            raise OffloadError(f"this bundle is an ELF object: name it {path.with_suffix('.o').name}, not {path.name}")
        ptx_files = {ptx_path(str(path), arch): text.encode() for arch, text in self.ptx.items()}
        write_all({str(path): self.data, **ptx_files})
        return path


def _in_api_terms(error: OffloadError, names: dict[str, str], origins: dict[str, str] | None = None) -> OffloadError:
    """`error` as the API's caller knows things: the options it names as keywords (`cuda_path=DIR`; as the
    mlir-offload.toml key where `origins` say the value came from the file), and the caller's names
    instead of temporary paths (`names`: path -> name)."""
    message = from_file(error, origins or {}).worded(KEYWORD)
    location = error.location
    for path, name in sorted(names.items(), key=lambda item: len(item[0]), reverse=True):
        message = message.replace(path, name)
        if location is not None and location.file == path:
            location = type(location)(name, location.line, location.col)
    return OffloadError(message, location)


def compile_file(
    path: str | os.PathLike, offload_arch: str | list[str] | None = None, *, textual: bool = False, **options: Any
) -> Bundle:
    """Compile an MLIR file as `mlir-offload compile` does (its mlir-offload.toml applies, under the
    keywords given). offload_arch: "sm_80,sm_90", ["80", "90a"], "gfx90a" (None: the file's); textual: -S.
    Keywords: every option of offload/options/compile.py marked api (offload.options.API_KEYWORDS), named as its
    field and typed as in mlir-offload.toml: opt_level=2, symbol_prefix="NAME", debug=True (-g),
    line_info=True (-lineinfo), device_image="cubin", host_format="obj", portable=True, cache=False, ..."""
    return _compile(path, offload_arch, textual, options, "compile_file")


def _compile(path, offload_arch, textual: bool, options: dict[str, Any], caller: str) -> Bundle:
    """compile_file's work; `caller` names the API function in messages."""
    from offload.config import project_config
    from offload.driver.outputs import compile_inputs
    from offload.driver.plan import compile_plan
    from offload.driver.stages import compile_bundle
    from offload.mlir.frontend import SourceText, refuse_pipeline_writing_over

    if not isinstance(path, (str, os.PathLike, SourceText)):
        raise OffloadError(f"{caller}(): path expects a file path, got {type(path).__name__}")
    if not isinstance(textual, bool):
        raise OffloadError(f"{caller}(): textual expects True or False, got {type(textual).__name__}")
    resolved = None
    try:
        given = given_keywords({"offload_arch": offload_arch, **options}, caller)
        resolved = resolve(given, project_config(path if isinstance(path, str) else os.fspath(path)))
        plan = compile_plan(
            path if isinstance(path, str) else os.fspath(path), None, textual, resolved.options, resolved.config_file
        )
        # A pass option naming the program, a library or the config file would write over it.
        read = [
            item
            for item in compile_inputs(plan.build, plan.input_path, plan.options)
            if not isinstance(item, SourceText)
        ]
        refuse_pipeline_writing_over(plan.options.pass_pipeline, read)
        compiled = compile_bundle(plan)
    except OffloadError as error:
        raise _in_api_terms(error, {}, dict(resolved.origins) if resolved else None) from None
    except (OSError, ValueError, UnicodeError) as error:  # a path Python cannot use (a NUL byte, ...)
        what = "the text" if isinstance(path, SourceText) else repr(os.fspath(path))
        raise OffloadError(f"{caller}(): cannot read {what}: {getattr(error, 'strerror', None) or error}") from None
    return Bundle(compiled.data, plan.bundle.host_format, dict(compiled.ptx))


def compile_text(
    text: str,
    offload_arch: str | list[str] | None = None,
    *,
    name: str = "module",
    textual: bool = False,
    **options: Any,
) -> Bundle:
    """Compile MLIR source text; `name` is the file name its diagnostics and debug information use
    (`bad.mlir` as given, `bad` as bad.mlir). Keyword options as compile_file's."""
    return _compile_text(text, offload_arch, name, textual, options, "compile_text")


def _compile_text(text: str, offload_arch, name, textual: bool, options: dict[str, Any], caller: str) -> Bundle:
    from offload.mlir.frontend import SourceText

    if not isinstance(text, str):
        raise OffloadError(f"{caller}(): text expects MLIR source as str, got {type(text).__name__}")
    check_plain_name(name, caller)
    try:
        source = text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise OffloadError(f"{caller}(): text holds a character UTF-8 cannot encode at index {e.start}") from None
    # No file: the name alone reaches diagnostics and debug information (the same text, the same bundle);
    # mlir-offload.toml is looked for from the current folder, as for a file named so there.
    return _compile(SourceText(source_name(name), source), offload_arch, textual, options, caller)


def compile_module(
    module, offload_arch: str | list[str] | None = None, *, name: str = "module", textual: bool = False, **options: Any
) -> Bundle:
    """Compile an in-memory `mlir.ir.Module` (gpu.module + host functions), made in the caller's own
    context and left untouched: it is printed with its locations and compiled in a context of ours.
    Keyword options as compile_file's."""
    operation = getattr(module, "operation", module)
    if not hasattr(operation, "get_asm"):
        raise OffloadError(f"compile_module(): module expects an mlir.ir.Module, got {type(module).__name__}")
    check_plain_name(name, "compile_module")
    try:
        operation.verify()
        text = operation.get_asm(enable_debug_info=True)
    except Exception as error:  # noqa: BLE001 - the bindings' MLIRError: the caller's module does not verify
        from offload.mlir.frontend import mlir_error

        found = (
            mlir_error(error, source_name(name))
            if hasattr(error, "error_diagnostics")
            else OffloadError(" ".join(str(error).split()))
        )
        raise OffloadError(f"compile_module(): the module does not verify: {found.message}", found.location) from None
    return _compile_text(text, offload_arch, name, textual, options, "compile_module")


def source_name(name: str) -> str:
    """The file name diagnostics give the text called `name`: as given when it names an MLIR file."""
    return name if name.endswith((".mlir", ".mlirbc")) else f"{name}.mlir"


def check_plain_name(name, caller: str) -> None:
    """`name` names <name>.mlir in diagnostics and debug information: a plain file name, no folder."""
    if not isinstance(name, str):
        raise OffloadError(f"{caller}(): name expects a plain file name (str), got {type(name).__name__}")
    if not name or name in (".", "..") or "/" in name or "\\" in name or not name.isprintable():
        raise OffloadError(f"{caller}(): name expects a plain file name without folders, got {name!r}")


def link(
    inputs: list,
    output: str | os.PathLike,
    *,
    flags: Sequence[str] = (),
    **options: Any,
) -> Path:
    """Link bundles (paths, or Bundle objects) with objects, libraries and clang `flags` into the
    executable `output`, as `mlir-offload link` does (the mlir-offload.toml found from the current folder
    applies, under the keywords given); returns its path. Keywords: every option of link's table
    (offload/options/link.py, offload.options.link.API_KEYWORDS), named as its field and typed as in
    mlir-offload.toml: clang, cuda_path, rocm_path, cudart="static", ptx=[...], ptx_beside=True,
    emulate=True (an executable that runs its kernels on this CPU, docs/emulator.md), sanitize, ..."""
    from offload.config import link_config
    from offload.driver.textual_ir import read_offload_images
    from offload.toolchain.emulate import link_emulated
    from offload.toolchain.link import find_bundles, link_bundle

    if isinstance(inputs, (str, os.PathLike, Bundle)):  # link("x.bc", ...): one input, not its characters
        inputs = [inputs]
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise OffloadError(f"link(): inputs expects a list of paths or Bundles, got {_describe(inputs)}")
    for index, item in enumerate(inputs):
        if not isinstance(item, (str, os.PathLike, Bundle)):
            raise OffloadError(f"link(): inputs[{index}] expects a path or a Bundle, got {type(item).__name__}")
    if not isinstance(output, (str, os.PathLike)) or not os.fspath(output):
        raise OffloadError(f"link(): output expects a file path, got {_describe(output)}")
    if isinstance(flags, str) or not isinstance(flags, (list, tuple)) or not all(isinstance(f, str) for f in flags):
        raise OffloadError(f"link(): flags expects a list of str (clang's words), got {_describe(flags)}")
    own = next((flag for flag in flags if LINK_FLAGS.get(flag.partition("=")[0]) in LINK_KEYWORDS), None)
    if own is not None:  # flags are clang's words: clang would refuse link's own (--emulate as '-emulate')
        name = LINK_FLAGS[own.partition("=")[0]]
        mention = link_option(name, True if LINK_SPECS[name].kind is SWITCH else "...")
        raise OffloadError(
            f"link(): flags go to clang unchanged, and {own} is link's own: pass {mention.worded(KEYWORD)}"
        )
    given = given_table_keywords(LINK_SPECS, options, "link")
    try:
        resolved = resolve_link(given, link_config())
    except OffloadError as error:
        raise OffloadError(f"link(): {error.worded(KEYWORD)}") from None
    settings = resolved.options
    with tempfile.TemporaryDirectory(prefix="mlir-offload-api-") as folder:
        arguments, names = [], {}
        for index, item in enumerate(inputs):
            if isinstance(item, Bundle):  # written where the link reads it, with its PTX beside
                item = item.write(Path(folder) / f"bundle{index}.offload{item.suffix}")
                names[str(item)] = f"inputs[{index}] (a Bundle)"
            arguments.append(os.fspath(item))
        arguments += list(flags)
        try:
            if settings.emulate:
                link_emulated(find_bundles(arguments, read_offload_images), arguments, os.fspath(output), settings)
            else:
                link_bundle(find_bundles(arguments, read_offload_images), arguments, os.fspath(output), settings)
        except OffloadError as error:
            raise _in_api_terms(error, {**names, folder: "<temporary folder>"}, resolved.origins) from None
        except (OSError, ValueError, UnicodeError) as error:  # a path Python cannot use (a NUL byte, ...)
            raise OffloadError(f"link(): {getattr(error, 'strerror', None) or error}") from None
    return Path(output)


def _describe(value) -> str:
    return f"{type(value).__name__} {value!r}"[:80]
