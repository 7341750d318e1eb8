"""The options nvcc and clang users bring to mlir-offload's compile (and device, run): each is read as the
mlir-offload option it means, or refused with one line naming mlir-offload's way. One table, FOREIGN_OPTIONS;
`translate` applies it to a command's words before click parses them (docs/cli.md lists them)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import click

# How a foreign option carries its value.
FLAG = "flag"  # -c, --use_fast_math: no value
JOINED = "joined"  # -ftz=true: after '=' only
EITHER = "either"  # -arch=sm_80 or -arch sm_80
PREFIX = "prefix"  # -DNAME, -D NAME, -I dir


@dataclass(frozen=True)
class ForeignOption:
    names: tuple[str, ...]
    value: str
    # The words of mlir-offload's options for the value ("" for a flag), or None: refused with `advice`.
    becomes: Callable[[str], list[str]] | None = None
    advice: str = ""
    commands: tuple[str, ...] = ()  # the commands it becomes an option of (empty: all); the others refuse it


def _archs(value: str) -> list[str]:
    if value in ("all", "all-major"):
        raise click.UsageError(
            f"'{value}' is not an arch list mlir-offload builds: name the archs, e.g. --offload-arch sm_80,sm_90"
        )
    return ["--offload-arch", value]


def _generate_code(value: str) -> list[str]:
    """nvcc's -gencode arch=compute_80,code=[sm_80,compute_80]: the code= list is what the executable gets."""
    fields: dict[str, list[str]] = {}
    key = None
    for part in value.replace('"', "").replace("[", "").replace("]", "").split(","):
        name, equal, rest = part.partition("=")
        if equal:
            key, part = name.strip(), rest
        if key is None or not part.strip():
            continue
        fields.setdefault(key, []).append(part.strip())
    codes = fields.get("code") or fields.get("arch")
    if not codes or set(fields) - {"arch", "code"}:
        raise click.UsageError(
            f"-gencode '{value}': expected arch=compute_XX,code=sm_XX (or code=[sm_XX,compute_XX]); "
            "mlir-offload spells it --offload-arch sm_XX"
        )
    # sm_XX with its compute_XX: the cubin, as clang's --offload-arch sm_XX (a bitcode image keeps its PTX anyway).
    real = {code for code in codes if code.startswith("sm_")}
    kept = [code for code in codes if not (code.startswith("compute_") and "sm_" + code[len("compute_") :] in real)]
    return ["--offload-arch", ",".join(dict.fromkeys(kept))]


def _boolean(true_words: list[str], false_words: list[str]) -> Callable[[str], list[str]]:
    def becomes(value: str) -> list[str]:
        if value.lower() in ("true", "1", "yes", "on"):
            return true_words
        if value.lower() in ("false", "0", "no", "off"):
            return false_words
        raise click.UsageError(f"expected true or false, got '{value}'")

    return becomes


def _ptxas(value: str) -> list[str]:
    words = [word for word in value.replace(",", " ").split()]
    if words and all(word in ("-v", "--verbose") for word in words):
        return ["--resource-usage"]
    raise click.UsageError(
        f"ptxas option '{value}': compile passes ptxas no option but -v, spelled --resource-usage (registers, "
        "spills, shared memory per kernel); a register limit is the kernel's nvvm.maxnreg attribute, and at link "
        "-Xcuda-ptxas -v reaches ptxas"
    )


def _keep(_: str) -> list[str]:
    return ["-save-temps=cwd"]


FOREIGN_OPTIONS: tuple[ForeignOption, ...] = (
    # Targets.
    ForeignOption(("-arch", "--gpu-architecture", "--cuda-gpu-arch", "-march"), EITHER, _archs),
    ForeignOption(("-gencode", "--generate-code"), EITHER, _generate_code),
    ForeignOption(
        ("-code", "--gpu-code"),
        EITHER,
        advice="name every arch the executable gets with --offload-arch "
        "(sm_80: its cubin; compute_80: PTX only), e.g. --offload-arch sm_80,sm_90",
    ),
    # Device code generation.
    ForeignOption(("--use_fast_math", "-use_fast_math", "-ffast-math"), FLAG, lambda _: ["--fast-math"]),
    ForeignOption(("-fno-fast-math",), FLAG, lambda _: ["--no-fast-math"]),
    ForeignOption(("-ftz", "--ftz"), JOINED, _boolean(["--ftz"], ["--no-ftz"])),
    ForeignOption(("-fgpu-flush-denormals-to-zero", "-fcuda-flush-denormals-to-zero"), FLAG, lambda _: ["--ftz"]),
    ForeignOption(
        ("-fno-gpu-flush-denormals-to-zero", "-fno-cuda-flush-denormals-to-zero"), FLAG, lambda _: ["--no-ftz"]
    ),
    ForeignOption(("-prec-div", "--prec-div"), JOINED, _boolean(["--prec-div"], ["--no-prec-div"])),
    ForeignOption(("-prec-sqrt", "--prec-sqrt"), JOINED, _boolean(["--prec-sqrt"], ["--no-prec-sqrt"])),
    ForeignOption(("-rdc", "--relocatable-device-code"), EITHER, _boolean(["-fgpu-rdc"], ["-fno-gpu-rdc"])),
    ForeignOption(("-dc", "--device-c"), FLAG, lambda _: ["-fgpu-rdc"]),
    ForeignOption(("--generate-line-info", "-gline-tables-only"), FLAG, lambda _: ["-lineinfo"]),
    ForeignOption(("--cuda-noopt-device-debug",), FLAG, lambda _: ["-G"]),  # clang's -G
    # Device LTO and parallel archs are what compile does anyway (bitcode images, one job per arch).
    ForeignOption(("-dlto", "--dlto", "-lto"), FLAG, lambda _: []),
    ForeignOption(("--threads", "-t"), EITHER, lambda _: []),
    ForeignOption(("-Ofast",), FLAG, lambda _: ["-O3", "--fast-math"]),
    ForeignOption(
        ("-Os", "-Oz"), FLAG, advice="device code has the levels -O0 to -O3 (GPU code is not optimized for size): -O2"
    ),
    ForeignOption(("-Xptxas", "--ptxas-options", "-Xcuda-ptxas"), EITHER, _ptxas),
    ForeignOption(
        ("--maxrregcount", "-maxrregcount"),
        EITHER,
        advice="a register limit is per kernel in MLIR: "
        "put nvvm.maxnreg = N : i32 on the gpu.func (as __launch_bounds__ or __maxnreg__)",
    ),
    # What compile writes and shows.
    ForeignOption(
        ("-ptx", "--ptx"),
        FLAG,
        lambda _: ["--emit=ptx"],
        advice="PTX alone is the device command's: mlir-offload device IN.mlir --offload-arch ARCH -ptx -o OUT.ptx "
        "(compile --device-image=ptx puts the PTX in the bundle)",
        commands=("device",),
    ),
    ForeignOption(
        ("-cubin", "--cubin"),
        FLAG,
        advice="a cubin alone is ptxas's: mlir-offload device IN.mlir --offload-arch sm_XX -ptx -o K.ptx, then "
        "ptxas -arch=sm_XX K.ptx -o K.cubin (compile --device-image=cubin puts cubins in the bundle)",
    ),
    ForeignOption(("-c",), FLAG, lambda _: []),  # compile only compiles: the bundle is the object
    ForeignOption(("--keep", "-keep"), FLAG, _keep),
    ForeignOption(
        ("--output-directory", "-odir"), EITHER, advice="name the bundle with its folder: -o DIR/NAME.offload.bc"
    ),
    ForeignOption(
        ("--keep-dir", "-keep-dir"),
        EITHER,
        advice="-save-temps=obj keeps every stage's file beside the output (-save-temps: in the current folder)",
    ),
    ForeignOption(
        ("-time", "--time"),
        EITHER,
        advice="-ftime-trace[=FILE] writes a Chrome trace of the stages; -v prints each stage with its time",
    ),
    ForeignOption(
        ("-###", "--dry-run", "--dryrun", "-dryrun"),
        FLAG,
        advice="compile runs its stages in this process, "
        "so there are no commands to print: -v prints each stage and tool as it runs (link -### prints "
        "the clang command)",
    ),
    ForeignOption(
        ("--cuda-device-only", "--offload-device-only", "-emit-llvm", "--cuda-host-only", "--offload-host-only"),
        FLAG,
        advice="a bundle holds host and device code as LLVM bitcode (-S: "
        "textual IR); the device code alone: mlir-offload device IN.mlir --offload-arch ARCH --emit=bc "
        "-o DIR",
    ),
    ForeignOption(
        ("-run", "--run"),
        FLAG,
        advice="mlir-offload run IN.mlir --offload-arch ARCH compiles, links and "
        "runs a program (--emulate: without a GPU)",
    ),
    ForeignOption(("-M", "-MM"), FLAG, advice="-MD (-MF FILE) writes the make rule while compiling"),
    ForeignOption(
        ("-E",),
        FLAG,
        advice="an MLIR program has no preprocessor; --pass-pipeline runs MLIR passes "
        "on it and -save-temps keeps the program as compile reads it",
    ),
    # C and C++ habits that have no meaning for an MLIR program.
    ForeignOption(
        ("-D", "-U"),
        PREFIX,
        advice="an MLIR program has no preprocessor: write the value into the "
        "program (arith.constant), or pass it to main at run time",
    ),
    ForeignOption(
        ("-I", "-isystem", "-include"),
        PREFIX,
        advice="an MLIR program includes no files: one program "
        "is one .mlir file (device code of other files: --link-bitcode, or link their objects)",
    ),
    ForeignOption(
        (
            "--expt-relaxed-constexpr",
            "-expt-relaxed-constexpr",
            "--extended-lambda",
            "-extended-lambda",
            "--expt-extended-lambda",
            "-expt-extended-lambda",
        ),
        FLAG,
        advice="a C++ language option: an MLIR program has no C++ to relax",
    ),
    ForeignOption(("-std", "--std"), JOINED, advice="the input is MLIR, not C++: no language standard to choose"),
    ForeignOption(("-x",), EITHER, advice="the input is always MLIR (.mlir, .mlirbc, or - for standard input)"),
    ForeignOption(
        ("-W", "-w"),
        PREFIX,
        advice="mlir-offload has no warning options (its warnings are few and each says what to do)",
    ),
    ForeignOption(
        ("-fPIC", "-fpic", "-fPIE", "-fpie", "-fno-pic"),
        FLAG,
        advice="the host code's relocation model "
        "is the link's: pass it to mlir-offload link (a bitcode bundle is code-generated there)",
    ),
    ForeignOption(
        ("-Xcompiler", "--compiler-options", "-ccbin", "--compiler-bindir"),
        EITHER,
        advice="the host "
        "code is compiled by the link's clang: pass host compiler options to mlir-offload link, "
        "and --clang PATH chooses that clang",
    ),
    ForeignOption(("-l", "-L"), PREFIX, advice="libraries are the link's: pass them to mlir-offload link"),
    ForeignOption(
        ("--cudart", "-cudart"),
        EITHER,
        advice="the CUDA runtime is chosen at link: mlir-offload link --cudart=shared|static|none",
    ),
    ForeignOption(
        ("--cuda-path",),
        EITHER,
        advice="compile finds libdevice and ptxas through CUDA_PATH: run "
        "CUDA_PATH=DIR mlir-offload compile ... (or --libdevice FILE); --cuda-path is link's",
    ),
)


def _match(word: str, own_takes_value: dict[str, bool]) -> tuple[ForeignOption, str | None] | None:
    """The foreign option `word` spells and its inline value (None: the value is the next word)."""
    name, equal, inline = word.partition("=")
    for foreign in FOREIGN_OPTIONS:
        for spelled in foreign.names:
            if foreign.value == FLAG and word == spelled:
                return foreign, ""
            if foreign.value in (JOINED, EITHER) and name == spelled and (equal or foreign.value == EITHER):
                return foreign, inline if equal else None
    if name in own_takes_value or word[:2] in own_takes_value:
        return None
    for foreign in FOREIGN_OPTIONS:
        for spelled in foreign.names:
            if foreign.value == PREFIX and word.startswith(spelled):
                return foreign, word[len(spelled) :] or None
    return None


def translate(words: list[str], own_takes_value: dict[str, bool], command: str) -> list[str]:
    """`words` with every foreign option replaced by mlir-offload's; click.UsageError for one it refuses.
    `own_takes_value`: the command's own option names -> whether each takes a separate value (skipped)."""
    out: list[str] = []
    at = 0
    while at < len(words):
        word = words[at]
        at += 1
        if word == "--":
            out += words[at - 1 :]
            break
        if not word.startswith("-") or word == "-":
            out.append(word)
            continue
        name = word.partition("=")[0]
        if word in own_takes_value and not own_takes_value[word] or "=" in word and own_takes_value.get(name):
            out.append(word)
            continue
        if word in own_takes_value:  # its value is the next word, whatever it is
            out += words[at - 1 : at + 1]
            at += 1
            continue
        found = _match(word, own_takes_value)
        if found is None:
            out.append(word)
            continue
        foreign, value = found
        if value is None:
            if at >= len(words):
                raise click.UsageError(f"option '{word}' requires a value")
            value = words[at]
            at += 1
        if foreign.becomes is None or foreign.commands and command not in foreign.commands:
            raise click.UsageError(
                f"'{word}' is an nvcc/clang option that mlir-offload {command} does not take: {foreign.advice}"
            )
        out += foreign.becomes(value)
    return out


# ---- link: nvcc's spellings of what clang spells otherwise, and compile's options given to the link -------

# Sources clang compiles for the device itself: with one on the link line, an arch option is clang's to take.
DEVICE_SOURCE_SUFFIXES = (".cu", ".hip")
COMPILE_TIME = (
    "the device code is compiled by mlir-offload compile, so this is compile's option: give it there "
    "(mlir-offload compile IN.mlir ... {word}) and link the bundle"
)
LINK_FOREIGN: tuple[ForeignOption, ...] = (
    # -Xptxas is nvcc's -Xcuda-ptxas (which link hands to the linker wrapper's ptxas).
    ForeignOption(("-Xptxas", "--ptxas-options"), EITHER, lambda value: ["-Xcuda-ptxas", value]),
    ForeignOption(("-rdc", "--relocatable-device-code"), JOINED, lambda _: []),  # the new driver always links so
    # nvcc's host compiler is the link's clang itself: its options go to clang as they are.
    ForeignOption(("-Xcompiler", "--compiler-options"), EITHER, lambda value: value.split(",")),
    ForeignOption(("-cudart",), EITHER, lambda value: ["--cudart", value]),
    ForeignOption(
        ("-ccbin", "--compiler-bindir"), EITHER, advice="the link's clang is the host compiler: --clang PATH chooses it"
    ),
    ForeignOption(
        ("-arch", "--gpu-architecture", "--cuda-gpu-arch", "--offload-arch", "-gencode", "--generate-code"),
        EITHER,
        advice="an executable gets the archs its bundles were compiled for (mlir-offload compile "
        "--offload-arch ...; mlir-offload inspect BUNDLE lists them)",
    ),
    ForeignOption(
        ("--use_fast_math", "-use_fast_math", "-lineinfo", "--generate-line-info", "-fgpu-rdc", "-dc"),
        FLAG,
        advice=COMPILE_TIME,
    ),
    ForeignOption(("-ftz", "-prec-div", "-prec-sqrt", "--maxrregcount", "-maxrregcount"), JOINED, advice=COMPILE_TIME),
    ForeignOption(
        ("-c", "-S", "-E"),
        FLAG,
        advice="link makes an executable; a bundle is made by mlir-offload compile (-o NAME.o for an ELF object)",
    ),
)


def translate_link(words: list[str]) -> list[str]:
    """A link's words with nvcc's spellings read as clang's and compile's options refused with the way."""
    sources = any(word.endswith(DEVICE_SOURCE_SUFFIXES) for word in words if not word.startswith("-"))
    out: list[str] = []
    at = 0
    while at < len(words):
        word = words[at]
        at += 1
        if word == "--":
            out += words[at - 1 :]
            break
        name, equal, inline = word.partition("=")
        found = next(
            (
                f
                for f in LINK_FOREIGN
                for spelled in f.names
                if word == spelled
                and f.value in (FLAG, EITHER)
                or name == spelled
                and equal
                and f.value in (JOINED, EITHER)
            ),
            None,
        )
        if found is None or sources and found.becomes is None and found.value == EITHER:
            from offload.formats.clang_arguments import takes_separate_argument

            out += words[at - 1 : at + 1] if takes_separate_argument(word) else [word]  # -Xlinker -c: the linker's
            at += 1 if takes_separate_argument(word) else 0
            continue
        value = inline if equal else ""
        if found.value == EITHER and not equal:
            if at >= len(words):
                raise click.UsageError(f"option '{word}' requires a value")
            value = words[at]
            at += 1
        if found.becomes is None:
            raise click.UsageError(
                f"'{word}' is an nvcc/clang option that mlir-offload link does not take: "
                + found.advice.format(word=word)
            )
        out += found.becomes(value)
    return out
