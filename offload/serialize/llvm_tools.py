"""The device skeleton's steps through LLVM's tools (optimizer.py says which and why), one process each:

    llvm-link  the gpu.modules' IR into one module
    llvm-link  each --link-bitcode library alone (bitcode of any LLVM or IR text -> our bitcode, whose
               triple our reader checks), then into the module
    llvm-link  + module flags + the device libraries, only what the code calls (--only-needed), internalized
               (not in one: llvm-link applies --only-needed to every file after the first)
    opt        internalize all but the kernels and the user's globals, then the pipeline (pipeline_text)

A module is the path of its bitcode file in a private temporary folder, read by our own bitcode reader;
what a tool prints goes into the error when it fails."""

from __future__ import annotations

import os
import subprocess

from offload import trace
from offload.errors import OffloadError, Words, parts_of
from offload.interrupts import temporary_folder
from offload.options import compile_option
from offload.packager.bitcode_ident import BitcodeModule, bitcode_module
from offload.packager.detect import is_bitcode
from offload.serialize.images import LoweredModule
from offload.serialize.kinds import KINDS, LibraryPlan
from offload.serialize.libraries import LIBRARY_FIX, check_library_triple, module_flags_ir, read_link_bitcode
from offload.serialize.llvmlite_backend import bitcode_call_graph
from offload.serialize.optimizer import pipeline_text


class LlvmToolsStages:
    """The skeleton's steps (skeleton.Stages) for one job, through llvm-link and opt."""

    def __init__(self, job):
        self.job = job
        self.target = job.target
        self.kind = KINDS[job.target.offload_kind]
        self.optimizer = job.optimizer
        self.folder = ""
        self.count = 0

    def __enter__(self) -> LlvmToolsStages:
        self._folder = temporary_folder("mlir-offload-llvm-")
        self.folder = self._folder.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self._folder.__exit__(*exc)

    def _path(self, name: str) -> str:
        self.count += 1
        return os.path.join(self.folder, f"{self.count}.{name}")

    def _write(self, name: str, data: bytes) -> str:
        path = self._path(name)
        with open(path, "wb") as out:
            out.write(data)
        return path

    def link_modules(self, lowered: list[LoweredModule]) -> str:
        sources = [self._write(f"module{i}.ll", m.llvm_ir.encode()) for i, m in enumerate(lowered)]
        own = self._path("own.bc")
        _run(
            [self.optimizer.link, *sources, "-o", own],
            f"internal error: llvm-link failed to link the gpu.modules of the {self.target.arch} image",
        )
        return own

    def link_user_bitcode(self, module: str, files: tuple[str, ...]) -> str:
        libraries = []
        for path in files:
            copy = self._write("user.input", read_link_bitcode(path))
            library = self._path("user.bc")
            _run(
                [self.optimizer.link, copy, "-o", library],
                (compile_option("link_bitcode", f"'{path}'"), " is not valid LLVM bitcode or IR"),
                names={copy: path},
            )
            check_library_triple(path, self._read(library).triple, self.target)
            libraries.append(library)
        linked = self._path("user-linked.bc")
        _run(
            [self.optimizer.link, module, *libraries, "-o", linked],
            ("cannot link the ", compile_option("link_bitcode"), f" libraries into the {self.target.arch} image"),
        )
        return linked

    def link_libraries(self, module: str, plan: LibraryPlan) -> str:
        flags = self._write("flags.ll", module_flags_ir(plan.module_flags, self.target).encode())
        for path in plan.files:
            _check_bitcode_header(path)
        linked = self._path("libraries-linked.bc")
        _run(
            [self.optimizer.link, module, "--only-needed", "--internalize", flags, *plan.files, "-o", linked],
            f"cannot link the device libraries into the {self.target.arch} image",
            LIBRARY_FIX,
        )
        return linked

    def optimize(self, module: str, keep: list[str], reflect, opt_level: int, lto_pre_link: bool) -> str:
        """The data layout is the one opt gives the triple, set as opt reads the module (the linker keeps
        whichever one it met first)."""
        if any("\n" in name or "\r" in name for name in keep):
            raise OffloadError("a device symbol name holds a line break, which opt's internalize list cannot name")
        target, optimizer = self.target, self.optimizer
        keep_file = self._write("keep.txt", "".join(f"{name}\n" for name in keep).encode())
        image = self._path("optimized.bc")
        command = [
            optimizer.path,
            *(f"-nvvm-reflect-add={name}={value}" for name, value in reflect),
            f"-mcpu={target.arch}",
            *([f"-mattr={target.features}"] if target.features else []),
            f"--data-layout={optimizer.data_layout(target.triple)}",
            f"-internalize-public-api-file={keep_file}",
            f"-passes=internalize,{pipeline_text(opt_level, lto_pre_link, self.kind.pre_link_passes)}",
            module,
            "-o",
            image,
        ]
        _run(command, f"internal error: {os.path.basename(optimizer.path)} failed to optimize the {target.arch} image")
        if not _same_layout(self._read(image).data_layout, optimizer.data_layout(target.triple)):
            raise OffloadError(
                f"internal error: {optimizer.path} wrote a {target.arch} image with another data "
                "layout than the target's"
            )
        return image

    def _read(self, path: str) -> BitcodeModule:
        with open(path, "rb") as file:
            module = bitcode_module(file.read())
        if module is None:
            raise OffloadError(
                f"internal error: LLVM's tools wrote a {self.target.arch} module our bitcode reader cannot read"
            )
        return module

    def functions(self, module: str) -> list[tuple[str, bool]]:
        return [(f.name, f.is_declaration) for f in self._read(module).functions]

    def call_graph(self, module: str) -> dict[str, set[str]]:
        return bitcode_call_graph(self.bitcode(module))

    def bitcode(self, module: str) -> bytes:
        with open(module, "rb") as file:
            return file.read()


def _same_layout(found: str, expected: str) -> bool:
    """Data layouts as sets of specifications: reading AMDGPU bitcode, LLVM moves m:e to the front."""
    return sorted(found.split("-")) == sorted(expected.split("-"))


def _check_bitcode_header(path: str) -> None:
    try:
        with open(path, "rb") as library:
            head = library.read(4)
    except OSError as e:
        raise OffloadError(f"cannot read device library '{path}': {e.strerror}") from None
    if not is_bitcode(head):
        raise OffloadError((f"device library '{path}' is not valid LLVM bitcode (no bitcode header): ", *LIBRARY_FIX))


def _run(command: list[str], failure: Words, fix: Words = "", names: dict[str, str] | None = None) -> None:
    """command, or an OffloadError: `failure`, what the tool printed (or how it ended), then `fix`; `names`
    (temporary copy -> the user's file) keeps temporary names out of the message."""
    trace.tool(command)
    try:
        done = subprocess.run(command, capture_output=True)
    except OSError as e:
        raise OffloadError(f"cannot run {command[0]}: {e.strerror}") from None
    if done.returncode != 0:
        how = f"killed by signal {-done.returncode}" if done.returncode < 0 else f"exit status {done.returncode}"
        printed = done.stderr.decode("utf-8", "replace")
        for temporary, name in (names or {}).items():
            printed = printed.replace(temporary, name)
        detail = " ".join(printed.split())[:300] or how
        raise OffloadError((*parts_of(failure), f": {detail}", *((": ", *parts_of(fix)) if fix else ())))
