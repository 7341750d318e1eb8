"""Which LLVM runs an image's LLVM stages (link, device libraries, internalize, optimize), and with which
pipeline.

LLVM's own tools where the build machine has them: `opt` and the `llvm-link` beside it, of the LLVM major
the MLIR bindings translate to (about.LLVM_MAJOR; Debian's opt-22 and llvm-link-22 are release builds,
llvmlite's LLVM has assertions). They run as processes of their own: the parent never loads a second LLVM (memory), a
device library is linked lazily and only for what the code calls (llvm-link --only-needed, as upstream's
LinkOnlyNeeded), and a crash of LLVM on some input is an exit status. Without them llvmlite does it all in
forked children. MLIR_OFFLOAD_OPT names another opt, or `llvmlite` for the in-process stages.

An image codegen turns into native code here (PTX, portable; a cubin without the target's device link
tools, offload/device/device_lto.py) gets the whole `default<On>`; a CUDA cubin made by the target's device
link run here gets what a bitcode image gets, then that link's `lto<O2>`. An image
the target clang LTO-links (a bitcode image) is optimized there: its device LTO runs the whole LTO pipeline
on it, whatever ran here. For CUDA it gets here only what must happen before (the target kind's
pre_link_passes): NVVM reflect with our __CUDA_* values, which the target would otherwise resolve with
its own defaults. clang's -foffload-lto runs its pre-link pipeline (`lto-pre-link<On>`) here instead,
which cost most of the device step and left the same SASS after the target's LTO (scripts/bench_e2e.py
compares it per kernel). HIP images, whose ISA nothing here compares, keep `lto-pre-link<On>`. In-process
(llvmlite builds no pre-link pipeline) every image gets `default<On>`."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass

from offload.about import LLVM_MAJOR
from offload.cache.facts import remembered
from offload.errors import OffloadError
from offload.packager.bitcode_ident import bitcode_module, bitcode_producer
from offload.toolchain.tools import tool_version

OPT_ENVIRONMENT = "MLIR_OFFLOAD_OPT"
_VERSION = re.compile(r"[0-9][0-9A-Za-z.+~_-]{0,63}")  # a bitcode producer's "22.1.8"
_DATA_LAYOUT = re.compile(r"[A-Za-z0-9:-]{0,1000}")  # "e-p6:32:32-i64:64-...": LLVM's data layout grammar
IN_PROCESS = "llvmlite"


@dataclass(frozen=True)
class Optimizer:
    """opt (path) and llvm-link (link) of one LLVM, with the data layout opt gives each triple; or llvmlite
    in-process (path None)."""

    path: str | None
    version: str
    link: str | None = None
    data_layouts: tuple[tuple[str, str], ...] = ()  # (triple, data layout)

    @property
    def in_process(self) -> bool:
        return self.path is None

    def data_layout(self, triple: str) -> str:
        return dict(self.data_layouts)[triple]

    def describe(self) -> str:
        return f"{self.path} + {self.link} (LLVM {self.version})" if self.path else f"llvmlite LLVM {self.version}"


def in_process_optimizer() -> Optimizer:
    import llvmlite.binding as llvm

    return Optimizer(None, ".".join(map(str, llvm.llvm_version_info)))


def find_optimizer(triples: tuple[str, ...] = ()) -> Optimizer:
    """LLVM's tools of the device LLVM major (MLIR_OFFLOAD_OPT, else opt-N, /usr/lib/llvm-N/bin/opt, opt),
    with the data layout of each triple, or llvmlite where there are none. A named opt that is not one
    is an error."""
    chosen = os.environ.get(OPT_ENVIRONMENT)
    if chosen == IN_PROCESS:
        return in_process_optimizer()
    major = LLVM_MAJOR
    for name in (chosen,) if chosen else llvm_tool_names("opt", major):
        path = shutil.which(name)
        found = path and _probe(path, major, triples)
        if found:
            return found
    if chosen:
        raise OffloadError(
            f"{OPT_ENVIRONMENT}='{chosen}' is not an opt of LLVM {major} with an llvm-link beside "
            f"it: name one (e.g. opt-{major}) or '{IN_PROCESS}'"
        )
    return in_process_optimizer()


def llvm_tool_names(tool: str, llvm_major: int) -> tuple[str, ...]:
    """Where an LLVM tool of one major is looked for, in order: Debian's versioned name, its LLVM folder,
    the plain name (the one lookup of LLVM's tools: opt, llvm-link beside it, llc)."""
    return (f"{tool}-{llvm_major}", f"/usr/lib/llvm-{llvm_major}/bin/{tool}", tool)


def find_llvm_tool(tool: str, llvm_major: int, candidates: tuple[str, ...] | None = None) -> str | None:
    """An LLVM tool (llc, opt) of our LLVM major, by Debian name first."""
    names = candidates or llvm_tool_names(tool, llvm_major)
    for name in names:
        path = shutil.which(name)
        # "LLVM version 22.1.8": the major must be ours.
        if path and (tool_version(path, "LLVM") or "").split(".")[0] == str(llvm_major):
            return path
    return None


def _probe(opt: str, major: int, triples: tuple[str, ...]) -> Optimizer | None:
    """The tools of `opt`, when it is of LLVM `major` and has an llvm-link beside it. One empty module per
    triple through opt gives its version (the bitcode's producer) and the triple's data layout: asked once
    per opt binary and triples, and remembered (offload.cache.facts)."""
    link = _link_beside(opt)
    if link is None:
        return None
    answer = remembered(
        "opt data layouts",
        [opt],
        lambda: _ask_opt(opt, triples),
        lambda answer: _is_opt_answer(answer, triples),
        list(triples),
    )
    if not answer or not answer[0].startswith(f"{major}."):
        return None
    return Optimizer(opt, answer[0], link, tuple((triple, layout) for triple, layout in answer[1]))


def _ask_opt(opt: str, triples: tuple[str, ...]) -> list | None:
    """[LLVM version, [[triple, data layout], ...]] of `opt`; [] when it is no opt that writes bitcode;
    None when it cannot be run."""
    version, layouts = "", []
    for triple in triples or ("",):
        command = [opt, "-o", "-", "-"] + ([f"-mtriple={triple}"] if triple else [])
        try:
            done = subprocess.run(command, input=b"", capture_output=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            return None
        producer = bitcode_producer(done.stdout) or ""
        module = bitcode_module(done.stdout)
        if done.returncode != 0 or not producer.startswith("LLVM") or module is None:
            return []
        version = producer[len("LLVM") :]
        if triple:
            layouts.append([triple, module.data_layout])
    return [version, layouts]


def _is_opt_answer(answer: object, triples: tuple[str, ...]) -> bool:
    """[] or [version, a data layout per triple, in order]: what _ask_opt answers (a stored answer is
    checked, as its texts reach opt's command line)."""
    if answer == []:
        return True
    if not (isinstance(answer, list) and len(answer) == 2 and isinstance(answer[0], str)):
        return False
    version, layouts = answer
    return (
        _VERSION.fullmatch(version) is not None
        and isinstance(layouts, list)
        and [pair[0] if isinstance(pair, list) and len(pair) == 2 else None for pair in layouts] == list(triples)
        and all(isinstance(layout, str) and _DATA_LAYOUT.fullmatch(layout) for _, layout in layouts)
    )


def _link_beside(opt: str) -> str | None:
    """llvm-link from opt's own LLVM: beside it with opt's suffix (opt-22 -> llvm-link-22), or beside the
    file it links to (/usr/bin/opt-22 -> /usr/lib/llvm-22/bin/llvm-link)."""
    folder, name = os.path.split(opt)
    real_folder = os.path.dirname(os.path.realpath(opt))
    for candidate in (os.path.join(folder, "llvm-link" + name[len("opt") :]), os.path.join(real_folder, "llvm-link")):
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def pipeline_text(opt_level: int, lto_pre_link: bool, pre_link_passes: tuple[str, ...] | None = None) -> str:
    """The new pass manager's pipeline: dead globals out before and after, the target kind's pre-link
    passes (else clang's `lto-pre-link<On>`) or default<On>."""
    if lto_pre_link:
        main = ",".join(pre_link_passes) if pre_link_passes is not None else f"lto-pre-link<O{opt_level}>"
    else:
        main = f"default<O{opt_level}>"
    return f"globaldce,{main},globaldce,strip-dead-prototypes"
